// tile_server.js: a web map of a snapshot's density tiles, the smallest tile server that serves geoacc: a Leaflet
// page (npm leaflet) and /tiles/Z/X/Y.png, each tile one query, geoacc_density_tile(SNAPSHOT, z, x, y, ...), run by
// psql against the database PG* name (a server with the GPU service, where the snapshot is).
//
//   node test/tiles/tile_server.js MODULES_DIR SNAPSHOT [PORT] [LAT LON ZOOM]
//
// MODULES_DIR holds node_modules/leaflet.  Then open http://127.0.0.1:PORT/ (default 8080); the map opens at LAT
// LON ZOOM (default the New York harbour at zoom 11).  VMAX (default 50) is the top of the one colour scale of
// every tile.  Also a module: require() it for startServer (test/tiles/tile_map.js does).
'use strict';
const fs = require('fs');
const http = require('http');
const path = require('path');
const { execFile } = require('child_process');

function page(lat, lon, zoom) {
  return `<!DOCTYPE html><html><head><meta charset="utf-8"><title>geoacc density tiles</title>
<link rel="stylesheet" href="/leaflet/leaflet.css"><script src="/leaflet/leaflet.js"></script>
<style>html, body, #map { width: 100%; height: 100%; margin: 0; } #map { background: #1b1f2a; }</style></head>
<body><div id="map"></div><script>
const map = L.map('map', { fadeAnimation: false, zoomAnimation: false }).setView([${lat}, ${lon}], ${zoom});
window.tiles = { requested: 0, loaded: 0, failed: 0 };
const layer = L.tileLayer('/tiles/{z}/{x}/{y}.png', { maxZoom: 18, attribution: 'density: geoacc' });
layer.on('tileloadstart', () => window.tiles.requested++);
layer.on('tileload', () => window.tiles.loaded++);
layer.on('tileerror', () => window.tiles.failed++);
window.loaded = new Promise((resolve) => layer.on('load', resolve));
layer.addTo(map);
window.map = map;
</script></body></html>`;
}

// One tile: PNG bytes from geoacc_density_tile, through psql (base64 text).
function tile(snapshot, vmax, z, x, y) {
  const name = `'${snapshot.replace(/'/g, "''")}'`;
  const sql = `SELECT translate(encode(geoacc_density_tile(${name}, ${z}, ${x}, ${y}, vmax => ${vmax}, ` +
    `colormap => 'inferno'), 'base64'), E'\\n', '')`;
  return new Promise((resolve, reject) => {
    execFile('psql', ['-XAtq', '-v', 'ON_ERROR_STOP=1', '-c', sql], { maxBuffer: 1 << 26 }, (err, stdout, stderr) => {
      if (err)
        reject(new Error(stderr.trim() || String(err)));
      else
        resolve(Buffer.from(stdout.trim(), 'base64'));
    });
  });
}

function startServer(modulesDir, snapshot, port, view) {
  const leaflet = path.resolve(modulesDir, 'node_modules/leaflet/dist');
  const vmax = Number(process.env.VMAX || 50);
  const served = { tiles: 0, errors: [] };
  const server = http.createServer(async (req, res) => {
    const url = req.url.split('?')[0];
    const t = url.match(/^\/tiles\/(\d+)\/(\d+)\/(\d+)\.png$/);
    try {
      if (url === '/' || url === '/index.html') {
        res.writeHead(200, { 'Content-Type': 'text/html' });
        res.end(page(view.lat, view.lon, view.zoom));
      } else if (t) {
        const png = await tile(snapshot, vmax, Number(t[1]), Number(t[2]), Number(t[3]));
        served.tiles++;
        res.writeHead(200, { 'Content-Type': 'image/png', 'Cache-Control': 'no-cache' });
        res.end(png);
      } else if (url.startsWith('/leaflet/') && !url.includes('..')) {
        const file = path.join(leaflet, url.slice('/leaflet/'.length));
        const type = { '.js': 'text/javascript', '.css': 'text/css', '.png': 'image/png' }[path.extname(file)];
        res.writeHead(200, { 'Content-Type': type || 'application/octet-stream' });
        fs.createReadStream(file).on('error', () => res.end()).pipe(res);
      } else {
        res.writeHead(404);
        res.end();
      }
    } catch (e) {
      served.errors.push(`${url}: ${e.message}`);
      res.writeHead(500, { 'Content-Type': 'text/plain' });
      res.end(e.message);
    }
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve({ server, served })));
}

module.exports = { startServer };

if (require.main === module) {
  const [modulesDir, snapshot, port = '8080', lat = '40.64', lon = '-74.07', zoom = '11'] = process.argv.slice(2);
  startServer(modulesDir, snapshot, Number(port), { lat, lon, zoom }).then(({ server }) =>
    console.log(`tile server: http://127.0.0.1:${server.address().port}/ (snapshot ${snapshot})`));
}
