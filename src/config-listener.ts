// The configuration once the server listens: origins that follow the port actually listened on, and the hints a
// developer needs when an explicit PUBLIC_URL or APP_URL points at this machine on another port.
import { type Config, deepFreeze, isLoopback, listenerOrigin } from './config.js';

/**
 * The configuration once the listener's real port is known (PORT=0 asks the system for one): origins the operator
 * did not set follow it, so links name the port actually listened on.
 */
export function withListenPort(config: Config, port: number): Config {
  if (port === config.port) return config;
  const listener = listenerOrigin(config.host, port);
  const publicUrl = config.explicitUrls.publicUrl ? config.publicUrl : listener;
  const appUrl = config.explicitUrls.appUrl ? config.appUrl : publicUrl;
  return deepFreeze({ ...config, port, listenerOrigin: listener, publicUrl, appUrl });
}

/**
 * Development hints: an explicit PUBLIC_URL or APP_URL that points at this machine on another port than the one
 * listened on makes every link fail on the first click. A remote host is taken as a proxy or tunnel and left alone.
 */
export function listenerMismatches(config: Config): string[] {
  if (config.isProduction) return [];
  const hints: string[] = [];
  for (const [name, key] of [
    ['PUBLIC_URL', 'publicUrl'],
    ['APP_URL', 'appUrl'],
  ] as const) {
    if (!config.explicitUrls[key]) continue;
    const u = new URL(config[key]);
    const port = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
    const local = isLoopback(u.hostname) || u.hostname === config.host;
    if (local && port !== config.port)
      hints.push(
        `${name} (${config[key]}) names port ${port} but the server listens on ${config.host}:${config.port}: links in mails and the setup link will not open; unset ${name} to follow PORT, or set it to ${config.listenerOrigin}`,
      );
  }
  return hints;
}
