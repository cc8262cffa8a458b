// tile_map.js: the web map of test/tiles/tile_server.js in headless Chromium (Debian's chromium, driven by npm
// playwright-core), checked as a person would look at it:
//   - every tile the map asks for comes back as a PNG, none fails, and the server raised no error;
//   - a screenshot is not a blank map: more than MIN_HEAT of its pixels are coloured by the heatmap;
//   - the heat lies over the tracks: at least 95% of the coloured pixels are inside the tracks' extent
//     (EXTENT: west south east north, in degrees, from PostGIS), as the map places it on screen.
//
//   node test/tiles/tile_map.js MODULES_DIR SNAPSHOT LAT LON ZOOM WEST SOUTH EAST NORTH PNG_OUT
//
// MODULES_DIR holds node_modules/{playwright-core,leaflet}; CHROMIUM (default /usr/bin/chromium) the browser; PG*
// the database with the snapshot.  Prints one line per check and exits non-zero when one fails.
'use strict';
const path = require('path');
const { startServer } = require('./tile_server.js');

const [modulesDir, snapshot, lat, lon, zoom, west, south, east, north, pngOut] = process.argv.slice(2);
const MIN_HEAT = 0.005;
const { chromium } = require(path.resolve(modulesDir, 'node_modules/playwright-core'));

(async () => {
  const { server, served } = await startServer(modulesDir, snapshot, 0, { lat, lon, zoom });
  const port = server.address().port;
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
                                          args: ['--no-sandbox'] });
  const tab = await browser.newPage({ viewport: { width: 900, height: 700 } });
  const messages = [];
  tab.on('pageerror', (e) => messages.push(String(e)));
  await tab.goto(`http://127.0.0.1:${port}/`);
  await tab.evaluate(() => Promise.race([window.loaded, new Promise((r) => setTimeout(r, 60000))]));
  const tiles = await tab.evaluate(() => window.tiles);
  // the tracks' extent on screen
  const box = await tab.evaluate(([w, s, e, n]) => {
    const a = window.map.latLngToContainerPoint([n, w]);
    const b = window.map.latLngToContainerPoint([s, e]);
    return { x0: a.x, y0: a.y, x1: b.x, y1: b.y };
  }, [Number(west), Number(south), Number(east), Number(north)]);
  await tab.locator('.leaflet-control-attribution').evaluate((e) => e.remove());
  const png = await tab.screenshot({ path: pngOut });
  // the screenshot's pixels, read back in the page
  const heat = await tab.evaluate(async ([data, b]) => {
    const img = new Image();
    img.src = 'data:image/png;base64,' + data;
    await img.decode();
    const c = document.createElement('canvas');
    c.width = img.width;
    c.height = img.height;
    const g = c.getContext('2d');
    g.drawImage(img, 0, 0);
    const d = g.getImageData(0, 0, c.width, c.height).data;
    let coloured = 0, inside = 0;
    for (let i = 0; i < d.length; i += 4) {
      // the background is #1b1f2a; the heatmap's inferno colours differ from it
      if (Math.abs(d[i] - 0x1b) + Math.abs(d[i + 1] - 0x1f) + Math.abs(d[i + 2] - 0x2a) <= 24)
        continue;
      coloured++;
      const x = (i / 4) % c.width, y = Math.floor(i / 4 / c.width);
      if (x >= b.x0 - 2 && x <= b.x1 + 2 && y >= b.y0 - 2 && y <= b.y1 + 2)
        inside++;
    }
    return { share: coloured / (d.length / 4), inside: coloured ? inside / coloured : 0 };
  }, [png.toString('base64'), box]);
  await browser.close();
  server.close();

  let bad = 0;
  const check = (ok, what) => { console.log(`tile map: ${ok ? 'ok  ' : 'FAIL'} ${what}`); bad += ok ? 0 : 1; };
  for (const m of messages.concat(served.errors))
    console.log(`tile map: error: ${m}`);
  check(messages.length === 0 && served.errors.length === 0, 'no error in the page or the tile server');
  check(tiles.requested > 0 && tiles.loaded === tiles.requested && tiles.failed === 0,
        `every tile loaded: ${tiles.loaded} of ${tiles.requested} (${served.tiles} served, ${tiles.failed} failed)`);
  check(heat.share > MIN_HEAT, `not a blank map: ${(heat.share * 100).toFixed(2)}% of the pixels are heat (${png.length} bytes of PNG)`);
  check(heat.inside >= 0.95, `over the tracks: ${(heat.inside * 100).toFixed(1)}% of the heat inside their extent`);
  process.exit(bad ? 1 : 0);
})().catch((e) => { console.log(`tile map: FAIL ${e.stack || e}`); process.exit(1); });
