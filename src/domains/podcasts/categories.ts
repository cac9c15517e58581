// Apple Podcasts' category list, as data: the names a feed's `itunes:category` may carry
// (docs/podcasts.md#the-podcasts-station-setting: categories are names from Apple Podcasts' category list).
//
// Source: Apple Podcasts Connect, "Podcast categories"
// (https://podcasters.apple.com/support/1691-apple-podcasts-categories), the current list as Apple
// publishes it: each category with its subcategories (some have none). Spotify for Podcasters reads the
// same `itunes:category` names. Names are written exactly as Apple spells them (`&` included: the feed
// escapes it as `&amp;`).

export const APPLE_PODCAST_CATEGORIES: Readonly<Record<string, readonly string[]>> = Object.freeze({
  Arts: ['Books', 'Design', 'Fashion & Beauty', 'Food', 'Performing Arts', 'Visual Arts'],
  Business: ['Careers', 'Entrepreneurship', 'Investing', 'Management', 'Marketing', 'Non-Profit'],
  Comedy: ['Comedy Interviews', 'Improv', 'Stand-Up'],
  Education: ['Courses', 'How To', 'Language Learning', 'Self-Improvement'],
  Fiction: ['Comedy Fiction', 'Drama', 'Science Fiction'],
  Government: [],
  History: [],
  'Health & Fitness': ['Alternative Health', 'Fitness', 'Medicine', 'Mental Health', 'Nutrition', 'Sexuality'],
  'Kids & Family': ['Education for Kids', 'Parenting', 'Pets & Animals', 'Stories for Kids'],
  Leisure: ['Animation & Manga', 'Automotive', 'Aviation', 'Crafts', 'Games', 'Hobbies', 'Home & Garden', 'Video Games'],
  Music: ['Music Commentary', 'Music History', 'Music Interviews'],
  News: ['Business News', 'Daily News', 'Entertainment News', 'News Commentary', 'Politics', 'Sports News', 'Tech News'],
  'Religion & Spirituality': ['Buddhism', 'Christianity', 'Hinduism', 'Islam', 'Judaism', 'Religion', 'Spirituality'],
  Science: [
    'Astronomy',
    'Chemistry',
    'Earth Sciences',
    'Life Sciences',
    'Mathematics',
    'Natural Sciences',
    'Nature',
    'Physics',
    'Social Sciences',
  ],
  'Society & Culture': ['Documentary', 'Personal Journals', 'Philosophy', 'Places & Travel', 'Relationships'],
  Sports: [
    'Baseball',
    'Basketball',
    'Cricket',
    'Fantasy Sports',
    'Football',
    'Golf',
    'Hockey',
    'Rugby',
    'Running',
    'Soccer',
    'Swimming',
    'Tennis',
    'Volleyball',
    'Wilderness',
    'Wrestling',
  ],
  Technology: [],
  'True Crime': [],
  'TV & Film': ['After Shows', 'Film History', 'Film Interviews', 'Film Reviews', 'TV Reviews'],
});

export const CATEGORY_NAMES: readonly string[] = Object.keys(APPLE_PODCAST_CATEGORIES);

/** Whether `subcategory` (when given) is one of `category`'s, and `category` one of Apple's. */
export function isAppleCategory(category: string, subcategory?: string | null): boolean {
  const subs = Object.hasOwn(APPLE_PODCAST_CATEGORIES, category) ? APPLE_PODCAST_CATEGORIES[category] : undefined;
  if (!subs) return false;
  return subcategory === undefined || subcategory === null || subs.includes(subcategory);
}
