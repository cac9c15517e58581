// The features that plug into the station core (docs/architecture.md, "A feature's station setting"):
// each registers its station setting and subscribes to station changes from a file in its own folder.
// The composition (services.ts, routes.ts) imports this list before anything else, so every registration
// has run when the station schemas are built; the order here is the admin station view's key order.
import './domains/radiodns/station.ts';
import './domains/podcasts/station.ts';
import './domains/schedule/station.ts';
import './domains/nowPlaying/station.ts';
