#!/usr/bin/env node
// The `bayou-loadtest` command. It lives outside dist/ so that a workspace install can link it
// before the first build; in a published package dist/ is always there.
import('../dist/cli.js').catch((error) => {
  if (error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('dist/cli.js')) {
    process.stderr.write(
      'bayou-loadtest: the package is not built yet; run `npm run build` at the repository root\n',
    );
    process.exit(1);
  }
  throw error;
});
