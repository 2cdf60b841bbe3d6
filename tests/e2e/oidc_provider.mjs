// A real OpenID provider on loopback for the sign-in test: npm's oauth2-mock-server, whose
// /authorize signs the browser in at once and redirects back with a code. Its ID tokens name the
// person given on the command line. Prints one JSON line ({"issuer": ...}) once it listens.
// usage: node oidc_provider.mjs PATH/TO/oauth2-mock-server EMAIL NAME
const [modulePath, email, name] = process.argv.slice(2);
const { OAuth2Server, Events } = await import(`${modulePath}/dist/index.mjs`);
const server = new OAuth2Server();
await server.issuer.keys.generate('RS256');
server.service.on(Events.BeforeTokenSigning, (token) => {
  Object.assign(token.payload, { email, name, email_verified: true });
});
await server.start(0, '127.0.0.1');
// the issuer as the desk reaches it (the library writes "localhost" for any loopback address)
server.issuer.url = `http://127.0.0.1:${server.address().port}`;
console.log(JSON.stringify({ issuer: server.issuer.url }));
process.on('SIGTERM', async () => { await server.stop(); process.exit(0); });
