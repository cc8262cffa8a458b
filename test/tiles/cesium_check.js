// cesium_check.js: load a tileset written by gpu_mesh_tileset in CesiumJS (npm cesium) in headless Chromium
// (Debian's chromium, driven by npm playwright-core) and check that it is on screen at the right place:
//   - the tileset loads and its root tiles render (tilesLoaded), no error raised;
//   - the centre of its bounding sphere, as longitude, latitude and height, is within TOLERANCE metres of
//     where PostGIS puts the mesh's centre (EXPECTED_LON, EXPECTED_LAT, EXPECTED_HEIGHT);
//   - a screenshot of the view zoomed to it is not empty sky: more than 2% of its pixels differ from the
//     background, and a pick at the middle of the canvas hits the tileset.
//
//   node test/tiles/cesium_check.js MODULES_DIR TILESET_DIR EXPECTED_LON EXPECTED_LAT EXPECTED_HEIGHT PNG_OUT
//
// MODULES_DIR holds node_modules/{playwright-core,cesium}; CHROMIUM (default /usr/bin/chromium) the browser.
// Prints one line per check and exits non-zero when one fails.
'use strict';
const fs = require('fs');
const http = require('http');
const path = require('path');

const [modulesDir, tilesetDir, lon, lat, height, pngOut] = process.argv.slice(2);
const TOLERANCE = 1.0;
const { chromium } = require(path.resolve(modulesDir, 'node_modules/playwright-core'));
const cesiumBuild = path.resolve(modulesDir, 'node_modules/cesium/Build/Cesium');

const page = `<!DOCTYPE html><html><head><meta charset="utf-8">
<script src="/cesium/Cesium.js"></script>
<link href="/cesium/Widgets/widgets.css" rel="stylesheet">
<style>html, body, #view { width: 100%; height: 100%; margin: 0; overflow: hidden; }</style></head>
<body><div id="view"></div><script>
window.result = (async () => {
  const viewer = new Cesium.Viewer('view', {
    baseLayer: false, baseLayerPicker: false, geocoder: false, timeline: false, animation: false,
    homeButton: false, sceneModePicker: false, navigationHelpButton: false, fullscreenButton: false,
    infoBox: false, selectionIndicator: false, terrainProvider: new Cesium.EllipsoidTerrainProvider(),
    contextOptions: { webgl: { preserveDrawingBuffer: true } } });
  viewer.scene.globe.show = false;
  viewer.scene.skyBox.show = false;
  viewer.scene.skyAtmosphere.show = false;
  viewer.scene.backgroundColor = Cesium.Color.BLACK;
  const tileset = await Cesium.Cesium3DTileset.fromUrl('/tiles/tileset.json', { maximumScreenSpaceError: 2 });
  // shade by the faces' own normals (the tiles of a TIN have none), lit from the south-west
  tileset.customShader = new Cesium.CustomShader({
    lightingModel: Cesium.LightingModel.UNLIT,
    fragmentShaderText: [
      'void fragmentMain(FragmentInput fsInput, inout czm_modelMaterial material) {',
      '  vec3 p = fsInput.attributes.positionEC;',
      '  vec3 n = normalize(cross(dFdx(p), dFdy(p)));',
      '  vec3 l = normalize(czm_normal * vec3(0.0, 0.0, 1.0) + vec3(-0.3, 0.2, 0.4));',
      '  material.diffuse = vec3(0.86, 0.80, 0.70) * (0.35 + 0.65 * abs(dot(n, l)));',
      '}'].join('\\n') });
  viewer.scene.primitives.add(tileset);
  await viewer.zoomTo(tileset, new Cesium.HeadingPitchRange(0.6, -0.55, tileset.boundingSphere.radius * 2.2));
  await new Promise((resolve) => {
    const done = () => resolve();
    tileset.allTilesLoaded.addEventListener(done);
    setTimeout(done, 30000);
  });
  for (let i = 0; i < 10; i++) {
    viewer.render();
    await new Promise((r) => setTimeout(r, 100));
  }
  const centre = Cesium.Cartographic.fromCartesian(tileset.boundingSphere.center);
  const canvas = viewer.scene.canvas;
  const picked = viewer.scene.pick(new Cesium.Cartesian2(canvas.clientWidth / 2, canvas.clientHeight / 2));
  return { lon: Cesium.Math.toDegrees(centre.longitude), lat: Cesium.Math.toDegrees(centre.latitude),
           height: centre.height, radius: tileset.boundingSphere.radius, tilesLoaded: tileset.tilesLoaded,
           picked: picked !== undefined && (picked.primitive === tileset || picked.tileset === tileset) };
})().catch((e) => ({ error: String(e && e.stack || e) }));
</script></body></html>`;

const types = { '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json', '.glb': 'model/gltf-binary',
                '.html': 'text/html', '.png': 'image/png', '.wasm': 'application/wasm' };

const server = http.createServer((req, res) => {
  const url = decodeURIComponent(req.url.split('?')[0]);
  let file = null;
  if (url === '/' || url === '/index.html') {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end(page);
    return;
  }
  if (url.startsWith('/cesium/'))
    file = path.join(cesiumBuild, url.slice('/cesium/'.length));
  else if (url.startsWith('/tiles/'))
    file = path.join(path.resolve(tilesetDir), url.slice('/tiles/'.length));
  if (file === null || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
    res.writeHead(404);
    res.end();
    return;
  }
  res.writeHead(200, { 'Content-Type': types[path.extname(file)] || 'application/octet-stream' });
  fs.createReadStream(file).pipe(res);
});

(async () => {
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const port = server.address().port;
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--ignore-gpu-blocklist', '--no-sandbox'] });
  const tab = await browser.newPage({ viewport: { width: 800, height: 600 } });
  const messages = [];
  tab.on('pageerror', (e) => messages.push(String(e)));
  await tab.goto(`http://127.0.0.1:${port}/`);
  const r = await tab.evaluate(() => window.result);
  const png = await tab.screenshot({ path: pngOut });
  const pixels = await tab.evaluate(() => {
    const c = document.querySelector('canvas');
    const copy = document.createElement('canvas');
    copy.width = c.width;
    copy.height = c.height;
    const g = copy.getContext('2d');
    g.drawImage(c, 0, 0);
    const d = g.getImageData(0, 0, c.width, c.height).data;
    let lit = 0;
    for (let i = 0; i < d.length; i += 4)
      if (d[i] + d[i + 1] + d[i + 2] > 30)
        lit++;
    return lit / (d.length / 4);
  });
  await browser.close();
  server.close();

  let bad = 0;
  const check = (ok, what) => { console.log(`cesium: ${ok ? 'ok  ' : 'FAIL'} ${what}`); bad += ok ? 0 : 1; };
  if (r.error) {
    check(false, `the tileset loads: ${r.error}`);
    process.exit(1);
  }
  for (const m of messages)
    console.log(`cesium: page error: ${m}`);
  check(messages.length === 0, 'no error in the page');
  check(r.tilesLoaded, 'the tiles in view are loaded');
  // metres on the ground between the bounding sphere's centre and PostGIS's centre of the mesh
  const R = 6371008.8;
  const dx = (r.lon - Number(lon)) * Math.PI / 180 * R * Math.cos(Number(lat) * Math.PI / 180);
  const dy = (r.lat - Number(lat)) * Math.PI / 180 * R;
  const dz = r.height - Number(height);
  check(Math.hypot(dx, dy) < TOLERANCE && Math.abs(dz) < TOLERANCE,
        `placed: bounding sphere centre ${r.lon.toFixed(7)} ${r.lat.toFixed(7)} ${r.height.toFixed(2)} m, ` +
        `${Math.hypot(dx, dy).toFixed(3)} m across and ${dz.toFixed(3)} m up from PostGIS's (radius ${r.radius.toFixed(1)} m)`);
  check(pixels > 0.02, `on screen: ${(pixels * 100).toFixed(1)}% of the pixels are the model's (${png.length} bytes of PNG)`);
  check(r.picked, 'a pick at the middle of the view hits the tileset');
  process.exit(bad ? 1 : 0);
})().catch((e) => {
  console.error(e);
  process.exit(2);
});
