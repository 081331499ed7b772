import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DomainError, ERROR_CODE_HEADER, isStaffAccount, STAFF_NOT_BUYER, storeUnreachable } from '@onsale/contracts';
import { type Context, Hono } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { z } from 'zod';
import { readCatalogPage } from '../catalog/catalog';
import { createOidcClient } from '../console/oidc-client';
import type { Html } from '../console/pages/layout';
import { sameToken } from '../console/session';
import type { Services } from '../context';
import type { ShopConfig } from './config';
import {
  eventPage,
  orderPage,
  ordersPage,
  presalePage,
  problemPage,
  queuePage,
  seatsPage,
  shopLayout,
  signedInPage,
  signedOutPage,
} from './pages';

type Env = { Variables: { services: Services; requestId: string } };
type C = Context<Env>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ASSETS = { 'shop.js': 'text/javascript; charset=utf-8', 'shop.css': 'text/css; charset=utf-8' } as const;
const defaultAssets = resolve(dirname(fileURLToPath(import.meta.url)), '../../shop-web/dist');
const LOGIN_COOKIE = 'onsale_shop_login';
const LoginState = z.object({ verifier: z.string(), redirectUri: z.string(), next: z.string() });
/** Where a sign-in may send the buyer back to: a page of the shop, never another site. */
const SHOP_PATH = /^\/shop(\/[A-Za-z0-9/_-]*)?$/;

/**
 * The buyer's pages under /shop: server-rendered from the catalog, with one small script that does the rest
 * through the edge's public API, as any buyer's client would (the waiting room, the seat map and availability,
 * holds, the order, "my orders"), and pays with Stripe from the browser. The server keeps no buyer session: the
 * buyer's token (from the identity provider, through sign-in here) lives in the browser, and the waiting room
 * keys the buyer's place by the token's subject, so a refresh or a second tab keeps the place.
 */
export function createShopApp(
  services: Services,
  config: ShopConfig & { CONSOLE_OIDC_ISSUER_URL?: string; CONSOLE_PUBLIC_URL?: string },
) {
  const app = new Hono<Env>();
  const publicUrl = config.CONSOLE_PUBLIC_URL?.replace(/\/+$/, '');
  const oidc = createOidcClient(
    { ...services.config, CONSOLE_OIDC_CLIENT_ID: config.SHOP_OIDC_CLIENT_ID, CONSOLE_OIDC_CLIENT_SECRET: undefined },
    services.config.IDENTITY_ISSUER,
  );
  const assetsDir = config.SHOP_ASSETS_DIR ?? defaultAssets;
  const stripeOrigin = new URL(config.SHOP_STRIPE_API_URL).origin;
  const loginKey = (state: string) =>
    `${services.prefix}shop:login:${createHash('sha256').update(state).digest('hex')}`;
  const cookie = { httpOnly: true, sameSite: 'Lax' as const, path: '/shop', secure: publicUrl?.startsWith('https:') };

  const page = (c: C, o: Parameters<typeof shopLayout>[0], status = 200) => {
    c.header('cache-control', 'no-store');
    return c.html(shopLayout(o), status as 200);
  };
  const problem = (c: C, status: number, message: string) =>
    page(c, { title: 'Problem', page: 'problem', body: problemPage(status, message) as Html }, status);
  const eventIdOf = (c: C) => {
    const id = c.req.param('eventId') ?? '';
    if (!UUID.test(id)) throw new DomainError('not_found', 'event not found');
    return id;
  };
  const catalog = async (c: C) => (await readCatalogPage({ ctx: services, eventId: eventIdOf(c) })).doc;
  const stripeData = () => ({
    'stripe-url': config.SHOP_STRIPE_API_URL.replace(/\/+$/, ''),
    'stripe-key': config.SHOP_STRIPE_PUBLISHABLE_KEY ?? '',
  });

  app.onError((err, c) => {
    if (err instanceof DomainError) return problem(c, err.status, err.message);
    if (storeUnreachable(err)) {
      c.header('retry-after', '5');
      c.header(ERROR_CODE_HEADER, 'store_unavailable');
      return problem(c, 503, 'a data store is unavailable; try again in a few seconds');
    }
    services.log.error('shop error', { requestId: c.get('requestId'), err, path: c.req.path });
    return problem(c, 500, 'internal error');
  });
  app.notFound((c) => problem(c, 404, 'no such page'));

  app.use('*', async (c, next) => {
    c.header('x-frame-options', 'DENY');
    c.header('x-content-type-options', 'nosniff');
    c.header('referrer-policy', 'same-origin');
    // The script talks to this origin (the edge) and to Stripe; tickets' QR codes and PDF are blob: URLs it makes.
    c.header(
      'content-security-policy',
      `default-src 'self'; img-src 'self' blob: data:; style-src 'self'; script-src 'self'; connect-src 'self' blob: ${stripeOrigin}; frame-ancestors 'none'; form-action 'self'; object-src 'none'`,
    );
    await next();
  });

  app.get('/assets/:file', async (c) => {
    const file = c.req.param('file') as keyof typeof ASSETS;
    if (!Object.hasOwn(ASSETS, file)) return problem(c, 404, 'no such file');
    try {
      const body = await readFile(join(assetsDir, file));
      return c.body(body, 200, { 'content-type': ASSETS[file], 'cache-control': 'no-cache' });
    } catch {
      services.log.error('shop assets are not built', { assetsDir });
      return c.text('shop assets are not built: run `pnpm --filter @onsale/control-plane build:shop`', 503);
    }
  });

  // ---- sign-in: authorization code with PKCE against the identity provider, as the console signs in
  app.get('/auth/login', async (c) => {
    if (!config.CONSOLE_OIDC_ISSUER_URL) return problem(c, 503, 'sign-in is not configured');
    const asked = c.req.query('next') ?? '';
    const next = SHOP_PATH.test(asked) ? asked : '/shop/orders';
    const redirectUri = `${publicUrl ?? new URL(c.req.url).origin}/shop/auth/callback`;
    const start = await oidc.start(redirectUri);
    await services.redis.set(
      loginKey(start.state),
      JSON.stringify({ verifier: start.verifier, redirectUri, next }),
      'EX',
      600,
    );
    setCookie(c, LOGIN_COOKIE, start.state, { ...cookie, maxAge: 600 });
    return c.redirect(start.url, 302);
  });
  app.get('/auth/callback', async (c) => {
    const code = c.req.query('code');
    const state = c.req.query('state');
    if (!code || !state) return problem(c, 400, 'the sign-in answer lacks its code or state');
    const mine = getCookie(c, LOGIN_COOKIE);
    deleteCookie(c, LOGIN_COOKIE, cookie);
    const raw = mine && sameToken(mine, state) ? await services.redis.getdel(loginKey(state)) : null;
    const login = raw ? LoginState.safeParse(JSON.parse(raw)) : null;
    if (!login?.success) return problem(c, 400, 'this sign-in was not started here or has expired; try again');
    const token = await oidc.exchange(code, login.data.verifier, login.data.redirectUri);
    const who = await services.identity.verify(token);
    if (isStaffAccount(who)) return problem(c, 403, STAFF_NOT_BUYER);
    return page(c, { title: 'Signed in', page: 'signed-in', body: signedInPage(token, login.data.next) as Html });
  });

  app.get('/signed-out', (c) => page(c, { title: 'Signed out', page: 'signed-out', body: signedOutPage() as Html }));
  app.get('/', (c) => c.redirect('/shop/orders', 303));
  app.get('/orders', (c) => page(c, { title: 'My orders', page: 'orders', body: ordersPage() as Html }));

  app.get('/events/:eventId', async (c) => {
    const ev = await catalog(c);
    return page(c, { title: ev.name, page: 'event', data: { event: ev.eventId }, body: eventPage(ev) as Html });
  });
  app.get('/events/:eventId/presale', async (c) => {
    const ev = await catalog(c);
    return page(c, {
      title: `${ev.name}: presale`,
      page: 'presale',
      data: { event: ev.eventId },
      body: presalePage(ev) as Html,
    });
  });
  app.get('/events/:eventId/queue', async (c) => {
    const ev = await catalog(c);
    return page(c, {
      title: `${ev.name}: waiting room`,
      page: 'queue',
      data: { event: ev.eventId },
      body: queuePage(ev) as Html,
    });
  });
  app.get('/events/:eventId/seats', async (c) => {
    const ev = await catalog(c);
    return page(c, {
      title: `${ev.name}: choose seats`,
      page: 'seats',
      data: { event: ev.eventId },
      body: seatsPage(ev) as Html,
    });
  });
  app.get('/events/:eventId/orders/:orderId', async (c) => {
    const ev = await catalog(c);
    const orderId = c.req.param('orderId');
    if (!UUID.test(orderId)) return problem(c, 404, 'order not found');
    return page(c, {
      title: `${ev.name}: your order`,
      page: 'order',
      data: { event: ev.eventId, order: orderId, ...stripeData() },
      body: orderPage(ev) as Html,
    });
  });

  // Mounted under the control plane's app, whose JSON 404 would answer otherwise: a buyer gets a page.
  app.all('*', (c) => problem(c, 404, 'no such page'));
  return app;
}
