// The features that plug into the station core (docs/architecture.md, "A feature's station setting"):
// each registers its station setting and subscribes to station changes from a file in its own folder
// (now-playing also follows the art its tracks show: nowPlaying/followUp.ts).
// The composition imports this list before anything else (the roles, roles/services.ts,
// workers/index.ts, routes.ts), so every registration has run when the station schemas are built; the
// order here is the admin station view's key order. src/services.ts (types only) does not import it: the
// features' files import its types. Only the metrics list (src/roles/metrics.ts) comes before it: it
// builds no schema. Audience also gives the play log its performances (nowPlaying/playFigures.ts).
import './domains/radiodns/station.ts';
import './domains/podcasts/station.ts';
import './domains/schedule/station.ts';
import './domains/audience/station.ts';
import './domains/audience/playFigures.ts';
import './domains/artwork/station.ts';
import './domains/reminders/station.ts';
import './domains/nowPlaying/station.ts';
import './domains/nowPlaying/followUp.ts';
import './domains/inbox/station.ts';
