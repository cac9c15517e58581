// Shim: the route table moved to src/routes.ts (the composition). app.ts still imports it from here;
// remove this file once app.ts takes the table from its caller (test/http/layers.test.ts allows it).
export { allRoutes } from '../routes.ts';
