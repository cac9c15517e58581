// The listener GraphQL schema. Shapes mirror the REST presenters, which the resolvers reuse, so the two
// never drift. JSON scalars (values, document, fields, weather and traffic snapshots) take no selection.

export const typeDefs = /* GraphQL */ `
  scalar JSON

  enum ContentSort {
    publishedAt
    updatedAt
  }
  enum SortDirection {
    asc
    desc
  }
  enum ContentFilterOp {
    exact
    contains
    anyOf
  }

  input ContentFilter {
    field: String!
    op: ContentFilterOp = exact
    value: String
    values: [String!]
  }

  type StreamUrl {
    label: String
    url: String!
    mime: String
    bitrateKbps: Int
    key: String!
    latencySeconds: Int!
    "where Waveline reads this stream's listener count (docs/audience.md), or null"
    stats: StreamStats
  }
  type StreamStats {
    "icecast or shoutcast"
    kind: String!
    url: String!
    "the Icecast mount (icecast only)"
    mount: String
  }
  type SocialLink {
    network: String!
    url: String!
  }
  type Profile {
    tagline: String
    description: String
    frequencyLabel: String
    websiteUrls: [String!]
    streamUrls: [StreamUrl!]
    contactEmail: String
    phone: String
    address: String
    socialLinks: [SocialLink!]
  }
  type Realtime {
    url: String!
    channel: String!
    sse: String!
  }
  type Resources {
    schemas: String
    content: String
    schedule: String
    programs: String
    currentBroadcast: String
    nowPlaying: String
    trackHistory: String
    weather: String
    traffic: String
    calendar: String
    graphql: String
    media: String
    podcast: String
    realtime: Realtime
  }
  type Delivery {
    pollIntervalSeconds: Int!
  }
  type Station {
    contractVersion: Int!
    id: String!
    slug: String!
    name: String!
    timezone: String!
    profile: Profile!
    resources: Resources!
    delivery: Delivery!
  }

  type ContentType {
    key: String!
    label: String!
    version: Int!
    archived: Boolean!
    fields: JSON!
  }

  type MediaVariants {
    thumb: String
    display: String
    card: String
    square: String
  }
  type PublicMedia {
    versionId: ID!
    kind: String!
    url: String!
    alt: String
    width: Int
    height: Int
    variants: MediaVariants!
  }
  type Related {
    programIds: [ID!]!
  }
  type PublishedRecord {
    contractVersion: Int!
    id: ID!
    publicationId: ID!
    revision: Int!
    type: String!
    schemaVersion: Int!
    publishedAt: String!
    firstPublishedAt: String!
    values: JSON!
    document: JSON!
    media: [PublicMedia!]!
    related: Related!
  }
  type ContentPage {
    records: [PublishedRecord!]!
    nextCursor: String
  }

  "a program's or presenter's picture: absolute URLs"
  type Image {
    url: String!
    "square JPEG renditions 300, 600 and 1200 (GraphQL field names cannot start with a digit)"
    variants: ArtworkVariants!
  }
  type ProgramRef {
    id: ID!
    title: String!
    profileId: String
    "null when none is set"
    image: Image
  }
  type PresenterRef {
    id: ID!
    title: String!
    "null when none is set"
    image: Image
  }
  type Broadcast {
    id: ID!
    title: String!
    startsAt: String!
    endsAt: String!
    timezone: String!
    localDate: String!
    resolution: String!
    status: String!
    cancellationReason: String!
    repeatOfId: ID
    nature: String!
    program: ProgramRef!
    presenters: [PresenterRef!]!
  }
  type Schedule {
    contractVersion: Int!
    timezone: String!
    broadcasts: [Broadcast!]!
    truncated: Boolean!
  }
  type Slot {
    weekday: Int!
    startTime: String!
    durationMinutes: Int!
  }
  type ProgramSummary {
    id: ID!
    title: String!
    description: String
    profileId: String
    "null when none is set"
    image: Image
    presenters: [PresenterRef!]!
    slots: [Slot!]!
  }
  type Programs {
    contractVersion: Int!
    timezone: String!
    fromDate: String!
    throughDate: String!
    programs: [ProgramSummary!]!
  }
  type CurrentBroadcast {
    contractVersion: Int!
    timezone: String!
    asOf: String!
    broadcast: Broadcast
    "present when the read named a stream"
    stream: StreamRef
  }

  type Track {
    artist: String
    title: String
    album: String
    durationSeconds: Float
    "HTTPS; null when unknown"
    artworkUrl: String
    "the art to show and where it came from; null while nothing is kept yet and when no source passes"
    artwork: Artwork
    isPlaying: Boolean!
    observedAt: String
    receivedAt: String!
  }
  type ArtworkVariants {
    _300: String!
    _600: String!
    _1200: String!
  }
  type Artwork {
    url: String!
    "operator | ingest | catalogue (kept cover art) or program | presenter | station (a fallback image)"
    source: String!
    width: Int
    height: Int
    "square JPEG renditions 300, 600 and 1200 (GraphQL field names cannot start with a digit)"
    variants: ArtworkVariants!
  }
  type NowPlaying {
    contractVersion: Int!
    stationId: String!
    timezone: String!
    track: Track
    elapsedSeconds: Int
    endsAt: String
    freshness: Freshness!
    "present when the read named a stream"
    stream: StreamRef
  }
  type StreamRef {
    key: String!
    latencySeconds: Int!
  }
  type LiveNowPlaying {
    track: Track
    elapsedSeconds: Int
    endsAt: String
    freshness: Freshness!
  }
  type UpNextItem {
    itemId: ID!
    kind: String!
    artist: String
    title: String!
    durationSeconds: Float
    plannedStartsAt: String!
  }
  type Live {
    contractVersion: Int!
    stationId: String!
    timezone: String!
    asOf: String!
    stream: StreamRef
    broadcast: Broadcast
    nowPlaying: LiveNowPlaying!
    "null when the station has up next off"
    upNext: [UpNextItem!]
  }
  type TrackHistoryItem {
    id: ID!
    artist: String
    title: String
    album: String
    durationSeconds: Float
    artworkUrl: String
    artwork: Artwork
    isPlaying: Boolean!
    observedAt: String
    receivedAt: String!
  }
  type TrackHistory {
    contractVersion: Int!
    items: [TrackHistoryItem!]!
    nextCursor: String
    "present when the read named a stream"
    stream: StreamRef
  }

  type Freshness {
    status: String!
    thresholdSeconds: Int
    ageSeconds: Int
    observedAt: String
    receivedAt: String
  }
  type Weather {
    timezone: String!
    freshness: Freshness!
    snapshots: JSON!
  }
  type Traffic {
    timezone: String!
    freshness: Freshness!
    snapshot: JSON
  }

  input PreviewInput {
    stationId: String!
    recordId: ID!
    revision: Int
    audience: String
  }
  type EditorialPreview {
    revision: Int!
    values: JSON!
    document: JSON!
    media: [PublicMedia!]!
  }

  type Mutation {
    "Needs the X-Preview-Grant header (a 15-minute grant for this record). POST only."
    previewEditorial(input: PreviewInput): EditorialPreview
  }

  type Query {
    station: Station
    schemas(type: String, version: Int): [ContentType!]!
    content(
      type: String!
      cursor: String
      limit: Int = 25
      sort: ContentSort = publishedAt
      direction: SortDirection = desc
      filter: [ContentFilter!]
    ): ContentPage
    contentRecord(id: ID!): PublishedRecord
    contentBySlug(type: String!, slug: String!): PublishedRecord
    schedule(fromDate: String, throughDate: String): Schedule
    programs(fromDate: String, throughDate: String): Programs
    "stream: the broadcast on air at that stream's heard time"
    currentBroadcast(stream: String): CurrentBroadcast
    "stream: a key of the station's profile.streamUrls; the track that stream's listeners hear now"
    nowPlaying(stream: String): NowPlaying
    "broadcast, now playing and up next at one instant (heard time with stream)"
    live(stream: String): Live
    "from/to: ISO 8601 instants, [from, to); broadcastId: items rundown following tied to that broadcast. A cursor works only with the filters it was issued for."
    trackHistory(cursor: String, limit: Int = 25, from: String, to: String, broadcastId: ID, stream: String): TrackHistory
    "null when the station does not deliver weather (no error)"
    weather: Weather
    "null when the station does not deliver traffic (no error)"
    traffic: Traffic
  }
`;
