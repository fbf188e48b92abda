// A real OpenID Provider for the identity tests: panva's oidc-provider (OpenID
// Certified), on 127.0.0.1, with
// - three service clients standing for people (client credentials; the access token is
//   a JWT for the audience `a2a-orchestrator`, with the client's `groups` and `name`):
//   alice (group hr; tenant acme), bob (group it-managers; tenants acme and globex),
//   olga (group sre; tenants acme and globex);
// - a resource `urn:a2a:other` whose tokens are for another audience, and
//   `urn:a2a:hr` whose tokens are for the audience `hr-agent`;
// - the client `orchestrator` (secret `orchestrator-secret`), for calls to agents: client
//   credentials, and RFC 8693 token exchange (a grant registered below: a token this
//   provider issued for `a2a-orchestrator` traded for one whose audience is `hr-agent`
//   or `it-agent`, with the same subject, and the orchestrator as `act` when it sends its
//   own token as `actor_token`); client-credentials tokens live TOKEN_TTL seconds (600);
// - the web view's public client `ui` (authorization code with PKCE), once
//   `POST /_test/ui-client?redirect=URI` names its redirect URI; the provider's own
//   development login page takes any of the people's names (any password);
// - signing keys it rotates on `POST /_test/rotate` (the new key signs, the old one is
//   still published), as a provider does;
// - `GET /_test/forge?kind=…`: tokens no provider would issue, made with this provider's
//   own key and jose (expired, wrong-issuer, none, hs256, tampered, a `sub` with a NUL or
//   over OpenID's 255 characters), for the refusals.
//
//   node idp.mjs          prints `PORT <n>` once it serves
import http from 'node:http';
import crypto from 'node:crypto';
import Provider from 'oidc-provider';
import * as jose from 'jose';

const AUDIENCE = 'a2a-orchestrator';
// Lifetime of client-credentials access tokens, in seconds (TOKEN_TTL: short ones expire
// within a test).
const TOKEN_TTL = Number(process.env.TOKEN_TTL ?? 600);
const PEOPLE = {
  alice: { name: 'Alice Archer', groups: ['hr'], tenants: ['acme'] },
  bob: { name: 'Bob Baker', groups: ['it-managers'], tenants: ['acme', 'globex'] },
  olga: { name: 'Olga Ops', groups: ['sre'], tenants: ['acme', 'globex'] },
};

async function newKey() {
  const { privateKey, publicKey } = await jose.generateKeyPair('RS256', { extractable: true });
  const jwk = await jose.exportJWK(privateKey);
  jwk.kid = crypto.randomUUID();
  jwk.alg = 'RS256';
  jwk.use = 'sig';
  const publicJwk = { ...(await jose.exportJWK(publicKey)), kid: jwk.kid, alg: 'RS256', use: 'sig' };
  return { jwk, publicJwk, privateKey, publicKey };
}

const keys = [await newKey()];
let provider;
let issuer;
let uiRedirect = null;

function build() {
  const p = new Provider(issuer, {
    clients: Object.keys(PEOPLE).concat(['orchestrator']).map((id) => ({
      client_id: id,
      client_secret: `${id}-secret`,
      grant_types: id === 'orchestrator' ? ['client_credentials', EXCHANGE] : ['client_credentials'],
      redirect_uris: [],
      response_types: [],
    })).concat(uiRedirect ? [{
      client_id: 'ui',
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code'],
      response_types: ['code'],
      redirect_uris: [uiRedirect],
    }] : []),
    jwks: { keys: keys.map((k) => k.jwk) },
    features: {
      devInteractions: { enabled: true },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => 'urn:a2a:orchestrator',
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, resource) => ({
          scope: 'a2a',
          audience: { 'urn:a2a:other': 'someone-else', 'urn:a2a:hr': 'hr-agent' }[resource] || AUDIENCE,
          accessTokenTTL: TOKEN_TTL,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    ttl: { ClientCredentials: TOKEN_TTL },
    extraTokenClaims: (ctx, token) => {
      const who = PEOPLE[token.accountId] || PEOPLE[token.clientId];
      return who ? { name: who.name, groups: who.groups, tenants: who.tenants } : {};
    },
  });
  p.on('server_error', (ctx, err) => console.error('idp server_error', err));
  p.registerGrantType(EXCHANGE, exchange, [
    'subject_token', 'subject_token_type', 'audience', 'requested_token_type', 'resource', 'scope',
    'actor_token', 'actor_token_type',
  ]);
  return p;
}

const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const AGENT_AUDIENCES = ['hr-agent', 'it-agent'];

// RFC 8693: the authenticated client trades a subject token this provider issued for the
// orchestrator for one for an agent's audience, keeping the subject.
async function exchange(ctx) {
  const { client, params } = ctx.oidc;
  const refuse = (error, description) => {
    ctx.status = 400;
    ctx.body = { error, error_description: description };
  };
  if (params.subject_token_type !== 'urn:ietf:params:oauth:token-type:access_token') {
    return refuse('invalid_request', 'subject_token_type must be an access token');
  }
  let claims;
  try {
    const jwks = jose.createLocalJWKSet({ keys: keys.map((k) => k.publicJwk) });
    ({ payload: claims } = await jose.jwtVerify(params.subject_token, jwks, { issuer, audience: AUDIENCE }));
  } catch (e) {
    return refuse('invalid_grant', `subject_token: ${e.message}`);
  }
  if (!AGENT_AUDIENCES.includes(params.audience)) {
    return refuse('invalid_target', `no audience ${params.audience}`);
  }
  // Delegation (RFC 8693 §4.1): an actor token this provider issued names who acts for
  // the subject; without one, the token says nothing of an actor.
  let act;
  if (params.actor_token) {
    try {
      const jwks = jose.createLocalJWKSet({ keys: keys.map((k) => k.publicJwk) });
      const { payload: actor } = await jose.jwtVerify(params.actor_token, jwks, { issuer });
      act = { sub: actor.sub };
    } catch (e) {
      return refuse('invalid_grant', `actor_token: ${e.message}`);
    }
  }
  const now = Math.floor(Date.now() / 1000);
  const token = await new jose.SignJWT({
    sub: claims.sub, name: claims.name, groups: claims.groups, client_id: client.clientId,
    ...(act ? { act } : {}), scope: 'a2a',
  })
    .setProtectedHeader({ alg: 'RS256', kid: keys[0].jwk.kid, typ: 'at+jwt' })
    .setIssuer(issuer).setAudience(params.audience).setIssuedAt(now).setExpirationTime(now + 300)
    .sign(keys[0].privateKey);
  ctx.body = {
    access_token: token, issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
    token_type: 'Bearer', expires_in: 300,
  };
}

async function forge(kind) {
  const now = Math.floor(Date.now() / 1000);
  const current = keys[0];
  const claims = { iss: issuer, sub: 'alice', aud: AUDIENCE, iat: now, exp: now + 600, groups: ['hr'] };
  const header = { alg: 'RS256', kid: current.jwk.kid, typ: 'at+jwt' };
  const sign = (c, h = header) => new jose.SignJWT(c).setProtectedHeader(h).sign(current.privateKey);
  switch (kind) {
    case 'valid':
      return sign(claims);
    case 'expired':
      return sign({ ...claims, iat: now - 7200, exp: now - 3600 });
    case 'wrong-issuer':
      return sign({ ...claims, iss: 'http://127.0.0.1:1/not-the-issuer' });
    case 'none': {
      const b64 = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
      return `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`;
    }
    case 'hs256': {
      // The classic confusion: the public key's PEM used as an HMAC secret.
      const pem = await jose.exportSPKI(current.publicKey);
      return new jose.SignJWT(claims)
        .setProtectedHeader({ alg: 'HS256', kid: current.jwk.kid })
        .sign(new TextEncoder().encode(pem));
    }
    case 'control-sub':
      return sign({ ...claims, sub: 'ali\u0000ce' });
    case 'long-sub':
      return sign({ ...claims, sub: 'a'.repeat(300) });
    case 'tampered': {
      const [h, , s] = (await sign(claims)).split('.');
      const payload = Buffer.from(JSON.stringify({ ...claims, sub: 'mallory', groups: ['sre'] })).toString('base64url');
      return `${h}.${payload}.${s}`;
    }
    default:
      throw new Error(`no forgery ${kind}`);
  }
}

const server = http.createServer(async (req, res) => {
  try {
    const url = new URL(req.url, issuer);
    if (req.method === 'POST' && url.pathname === '/_test/rotate') {
      keys.unshift(await newKey());
      provider = build();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kid: keys[0].jwk.kid }));
      return;
    }
    if (req.method === 'POST' && url.pathname === '/_test/ui-client') {
      uiRedirect = url.searchParams.get('redirect');
      provider = build();
      res.writeHead(204);
      res.end();
      return;
    }
    if (req.method === 'GET' && url.pathname === '/_test/forge') {
      const token = await forge(url.searchParams.get('kind'));
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(token);
      return;
    }
    provider.callback()(req, res);
  } catch (e) {
    res.writeHead(500);
    res.end(String(e));
  }
});

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  issuer = `http://127.0.0.1:${port}`;
  provider = build();
  console.log(`PORT ${port}`);
});
