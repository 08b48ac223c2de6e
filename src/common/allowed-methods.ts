import type { Request } from 'express';

interface RouteLayer {
  route?: { methods: Record<string, boolean> };
  match?: (path: string) => unknown;
}

/**
 * The methods the application serves on the request's path (from Express's route table), for a 405
 * with `Allow` when a known path is called with another method. Empty for an unknown path.
 */
export function allowedMethods(req: Request): string[] {
  const stack = (req.app as unknown as { router?: { stack?: RouteLayer[] } }).router?.stack ?? [];
  const methods = new Set<string>();
  for (const layer of stack) {
    const routeMethods = Object.keys(layer.route?.methods ?? {});
    // A catch-all route (every method) says nothing about this resource.
    if (routeMethods.length > 0 && routeMethods.length <= 8 && layer.match?.(req.path)) {
      routeMethods.forEach((m) => methods.add(m.toUpperCase()));
    }
  }
  if (methods.has('GET')) {
    methods.add('HEAD');
  }
  return [...methods].sort();
}
