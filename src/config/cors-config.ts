/** CORS_ORIGINS: `*` (any page may call the API) or the exact origins allowed to. */
export type CorsOrigins = '*' | string[];

export class CorsConfigError extends Error {}

/** Parses a comma-separated list of origins (`https://shop.example.com`, `http://127.0.0.1:8080`) or `*`. */
export function loadCorsOrigins(raw: string | undefined): CorsOrigins {
  const value = raw?.trim();
  if (value === undefined || value === '' || value === '*') {
    return '*';
  }
  return value.split(',').map((entry) => {
    const origin = entry.trim();
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    if (parsed === undefined || !['http:', 'https:'].includes(parsed.protocol) || parsed.origin !== origin) {
      throw new CorsConfigError(
        'CORS_ORIGINS must be * or a comma-separated list of origins (scheme://host[:port], no path)',
      );
    }
    return origin;
  });
}
