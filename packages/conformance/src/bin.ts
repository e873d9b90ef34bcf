import { main } from './cli.js';

main(process.argv.slice(2)).then((code) => process.exit(code), (e) => {
  console.error(e);
  process.exit(2);
});
