export { contentRoutes } from './routes.ts';
export { contentAdminRoutes } from './adminRoutes.ts';
