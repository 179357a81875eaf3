// The player of codegen.animation's pages: reads the scene (JSON, the series in base64),
// builds it with three.js (inlined as text, imported from a blob: no server, no network),
// and plays it. #t=SECONDS shows that moment, paused; #hud=0 hides the time, the values and
// the controls (for pictures); #fps=N plays and writes the intervals of N animation frames
// (and the script's share of each) into #frametimes. window.codegen holds the scene, the
// camera and the renderer for inspection (tests, the console).
//
// Frame cost: composing the poses takes well under a millisecond; rendering dominates,
// most of all on software WebGL (SwiftShader), where it is paid per shaded pixel. Hence
// Lambert shading evaluated per vertex (three.js's own Lambert lights each pixel, which
// on SwiftShader costs four times a flat colour), closed shapes drawn front faces only,
// no antialiasing, no kept drawing buffer, equal rods instanced, nothing allocated per
// frame and the DOM touched only where something changed; and playing at half resolution
// where that is not enough.
const $ = id => document.getElementById(id);
const fail = e => { $("errors").textContent += "error: " + (e && e.stack || e) + "\n"; };

function decode(b64, Type) {
  const s = atob(b64), bytes = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) bytes[i] = s.charCodeAt(i);
  return new Type(bytes.buffer);
}

try {
  const url = URL.createObjectURL(new Blob([$("three-src").textContent], {type: "text/javascript"}));
  const THREE = await import(url);
  const S = JSON.parse($("scene").textContent);
  const t = decode(S.t, Float64Array), n = t.length;
  const frames = Object.fromEntries(Object.entries(S.frames).map(([k, v]) => [k, decode(v, Float32Array)]));
  const points = Object.fromEntries(Object.entries(S.points).map(([k, v]) => [k, decode(v, Float32Array)]));
  const up = new THREE.Vector3(...S.up).normalize();

  const renderer = new THREE.WebGLRenderer({antialias: false, powerPreference: "high-performance"});
  renderer.debug.onShaderError = (gl, program) =>          // three.js only logs it
    fail("a shader did not compile: " + gl.getProgramInfoLog(program));
  const fullRatio = Math.min(window.devicePixelRatio, 2);
  renderer.setPixelRatio(fullRatio);
  renderer.setSize(window.innerWidth, window.innerHeight);
  document.body.prepend(renderer.domElement);
  const scene = new THREE.Scene();
  scene.background = new THREE.Color(0xf2f2f2);
  const hemi = new THREE.HemisphereLight(0xffffff, 0x777777, 2.2);
  hemi.position.copy(up);
  scene.add(hemi);
  const sun = new THREE.DirectionalLight(0xffffff, 1.2);
  scene.add(sun);

  // three.js's MeshLambertMaterial (ambient, hemisphere and directional lights, the same
  // sums) evaluated at the vertices instead of at every pixel: exact on flat faces (a
  // box's), Gouraud on curved ones. The colour leaves the vertex already in sRGB, both
  // faces' colours are carried (a mesh file is drawn from both sides), and a pixel only
  // picks one: the cheapest shading software WebGL can do.
  const litVertex = `
    #include <common>
    #include <lights_pars_begin>
    uniform vec3 diffuse;
    varying vec3 vFront, vBack;
    vec3 lit(const in vec3 n) {
      vec3 irradiance = ambientLightColor;
      #if NUM_HEMI_LIGHTS > 0
        for (int i = 0; i < NUM_HEMI_LIGHTS; i++)
          irradiance += getHemisphereLightIrradiance(hemisphereLights[i], n);
      #endif
      #if NUM_DIR_LIGHTS > 0
        for (int i = 0; i < NUM_DIR_LIGHTS; i++)
          irradiance += saturate(dot(n, directionalLights[i].direction)) * directionalLights[i].color;
      #endif
      vec3 c = RECIPROCAL_PI * diffuse * irradiance;      // linear, as three.js's Lambert
      return mix(pow(c, vec3(0.41666)) * 1.055 - vec3(0.055), c * 12.92,
                 vec3(lessThanEqual(c, vec3(0.0031308))));   // to sRGB
    }
    void main() {
      #include <beginnormal_vertex>
      #include <defaultnormal_vertex>
      #include <begin_vertex>
      #include <project_vertex>
      vec3 n = normalize(transformedNormal);
      vFront = lit(n);
      vBack = lit(-n);
    }`;
  const litFragment = `
    uniform float opacity;
    varying vec3 vFront, vBack;
    void main() { gl_FragColor = vec4(gl_FrontFacing ? vFront : vBack, opacity); }`;
  const lambert = ({color, opacity = 1, ...options}) => new THREE.ShaderMaterial({
    lights: true, vertexShader: litVertex, fragmentShader: litFragment, ...options,
    uniforms: THREE.UniformsUtils.merge([THREE.UniformsLib.lights,
      {diffuse: {value: new THREE.Color(color)}, opacity: {value: opacity}}])});

  // ground grid through the origin, normal to up; world axes at the origin
  const flexible = S.flexible.map(f => ({...f, x: decode(f.nodes, Float32Array)}));
  let reach = 0;
  for (const x of [...Object.values(points), ...flexible.map(f => f.x)])
    for (let i = 0; i < x.length; i += 3) {
      const h = x[i] * up.x + x[i + 1] * up.y + x[i + 2] * up.z;
      reach = Math.max(reach, Math.hypot(x[i] - h * up.x, x[i + 1] - h * up.y, x[i + 2] - h * up.z));
    }
  const step = Math.pow(10, Math.floor(Math.log10(Math.max(S.size, 1e-3) / 4)));
  const cells = 2 * Math.ceil((reach + S.size / 2) / step) + 2;
  const grid = new THREE.GridHelper(cells * step, cells, 0x888888, 0xc8c8c8);
  grid.quaternion.setFromUnitVectors(new THREE.Vector3(0, 1, 0), up);
  const still = o => { o.updateMatrix(); o.matrixAutoUpdate = false; scene.add(o); return o; };
  still(grid);
  still(new THREE.AxesHelper(0.4 * S.size));

  // the drawn objects: each in a holder that follows its frame and point
  const movers = [];
  const holder = (frame, point) => {
    const g = new THREE.Group();
    scene.add(g);
    movers.push({g, q: frame ? frames[frame] : null, p: points[point]});
    return g;
  };
  for (const o of S.objects) {
    let geometry;
    if (o.kind === "box") geometry = new THREE.BoxGeometry(...o.size);
    else if (o.kind === "sphere") geometry = new THREE.SphereGeometry(o.radius, 24, 12);
    else if (o.kind === "cylinder") {
      geometry = new THREE.CylinderGeometry(o.radius, o.radius, o.length, 32);
      if (o.axis === "x") geometry.rotateZ(-Math.PI / 2);
      if (o.axis === "z") geometry.rotateX(Math.PI / 2);
    } else {
      geometry = new THREE.BufferGeometry();
      geometry.setAttribute("position", new THREE.BufferAttribute(decode(o.vertices, Float32Array), 3));
      geometry.setIndex(new THREE.BufferAttribute(decode(o.faces, Uint32Array), 1));
      geometry.computeVertexNormals();
    }
    // a mesh file may be open: both faces; closed shapes: front faces only
    const mesh = new THREE.Mesh(geometry, lambert(
      {color: o.color, side: o.kind === "mesh" ? THREE.DoubleSide : THREE.FrontSide,
       transparent: o.opacity < 1, opacity: o.opacity, depthWrite: o.opacity === 1}));
    mesh.position.set(...o.offset);
    mesh.quaternion.set(...o.rotation);
    mesh.updateMatrix();
    mesh.matrixAutoUpdate = false;
    holder(o.frame, o.point).add(mesh);
  }
  for (const tr of S.triads) {
    const axes = new THREE.AxesHelper(0.25 * S.size);
    axes.matrixAutoUpdate = false;
    holder(tr.frame, tr.point).add(axes);
  }

  // rods between two moving points (joint links, flexible bodies' segments) and balls at
  // moving points: one instanced mesh per kind and colour, placed each frame
  const unitRod = new THREE.CylinderGeometry(1, 1, 1, 12);
  const unitBall = new THREE.SphereGeometry(1, 12, 8);
  const instanced = (geometry, color, count) => {
    const m = new THREE.InstancedMesh(geometry, lambert({color}), count);
    m.frustumCulled = false;             // the instances move: no bounds of the geometry's own
    m.instanceMatrix.setUsage(THREE.DynamicDrawUsage);
    m.matrixAutoUpdate = false;
    scene.add(m);
    return m;
  };
  const links = {a: S.links.map(([a]) => points[a]), b: S.links.map(([, b]) => points[b]),
                 mesh: S.links.length ? instanced(unitRod, 0x505050, S.links.length) : null};
  const flexes = flexible.map(f => {
    const line = f.style === "line" && f.count > 1;
    const o = {x: f.x, count: f.count, radius: S.size / (line ? 120 : 80),
               rods: line ? instanced(unitRod, f.color, f.count - 1) : null,
               balls: instanced(unitBall, f.color, f.count)};
    o.balls.name = o.rods ? "nodes:" + f.name : "dots:" + f.name;
    if (o.rods) o.rods.name = "rods:" + f.name;
    return o;
  });
  const traces = S.traces.map((name, k) => {
    const geometry = new THREE.BufferGeometry();
    geometry.setAttribute("position", new THREE.BufferAttribute(points[name], 3));
    const line = new THREE.Line(geometry, new THREE.LineBasicMaterial(
      {color: new THREE.Color().setHSL((0.08 + 0.37 * k) % 1, 0.8, 0.4)}));
    line.frustumCulled = false;
    scene.add(line);
    return line;
  });

  // orbit camera about a target, with up kept up: drag turns, shift-drag or right-drag
  // pans, the wheel zooms
  const camera = new THREE.PerspectiveCamera(40, window.innerWidth / window.innerHeight,
                                             S.size / 200, S.size * 200);
  camera.up.copy(up);
  const e1 = new THREE.Vector3(1, 0, 0);
  if (Math.abs(e1.dot(up)) > 0.9) e1.set(0, 1, 0);
  e1.sub(up.clone().multiplyScalar(e1.dot(up))).normalize();
  const e2 = up.clone().cross(e1);
  const orbit = {target: new THREE.Vector3(...S.centre), az: -1.1, el: 0.35,
                 radius: 0.9 * S.size / Math.sin(THREE.MathUtils.degToRad(20)) + S.size / 10};
  let cameraMoved = true;
  function placeCamera() {
    cameraMoved = true;
    const c = Math.cos(orbit.el);
    camera.position.copy(orbit.target)
      .addScaledVector(e1, orbit.radius * c * Math.cos(orbit.az))
      .addScaledVector(e2, orbit.radius * c * Math.sin(orbit.az))
      .addScaledVector(up, orbit.radius * Math.sin(orbit.el));
    camera.lookAt(orbit.target);
    sun.position.copy(camera.position).addScaledVector(up, orbit.radius);
  }
  let drag = null;
  const canvas = renderer.domElement;
  canvas.addEventListener("contextmenu", e => e.preventDefault());
  canvas.addEventListener("pointerdown", e => { drag = {x: e.clientX, y: e.clientY, pan: e.button === 2 || e.shiftKey}; });
  window.addEventListener("pointerup", () => { drag = null; });
  window.addEventListener("pointermove", e => {
    if (!drag) return;
    const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    drag.x = e.clientX; drag.y = e.clientY;
    if (drag.pan) {
      const s = orbit.radius / window.innerHeight;
      const right = new THREE.Vector3().setFromMatrixColumn(camera.matrixWorld, 0);
      const camUp = new THREE.Vector3().setFromMatrixColumn(camera.matrixWorld, 1);
      orbit.target.addScaledVector(right, -dx * s).addScaledVector(camUp, dy * s);
    } else {
      orbit.az -= 0.008 * dx;
      orbit.el = Math.max(-1.55, Math.min(1.55, orbit.el + 0.008 * dy));
    }
    placeCamera();
    draw();
  });
  canvas.addEventListener("wheel", e => {
    e.preventDefault();
    orbit.radius *= Math.exp(0.001 * e.deltaY);
    placeCamera();
    draw();
  }, {passive: false});
  window.addEventListener("resize", () => {
    camera.aspect = window.innerWidth / window.innerHeight;
    camera.updateProjectionMatrix();
    renderer.setSize(window.innerWidth, window.innerHeight);
    placeCamera();
    draw();
  });

  // the pose at time T: positions interpolated linearly, orientations by slerp; the
  // sample k and the fraction a towards k + 1 kept here (nothing allocated per frame)
  const outputs = Object.entries(S.outputs).map(([name, o]) => {
    const row = document.createElement("div"), value = document.createElement("span");
    row.innerHTML = '<span class="name"></span> = ';
    row.firstChild.textContent = name;
    row.append(value);
    $("values").append(row);
    return {width: o.width, v: decode(o.values, Float32Array), value};
  });
  const qa = new THREE.Quaternion(), qb = new THREE.Quaternion(), vb = new THREE.Vector3();
  const p1 = new THREE.Vector3(), p2 = new THREE.Vector3(), dir = new THREE.Vector3();
  const rodQ = new THREE.Quaternion(), rodS = new THREE.Vector3(), place = new THREE.Matrix4();
  const Y = new THREE.Vector3(0, 1, 0), noTurn = new THREE.Quaternion();
  let now = t[0], k = 0, a = 0, j = 0, tracesShown = null;
  function index(T) {
    let lo = 0, hi = n - 1;
    if (T <= t[0] || n === 1) { k = 0; a = 0; }
    else if (T >= t[n - 1]) { k = n - 1; a = 0; }
    else {
      while (hi - lo > 1) { const mid = (lo + hi) >> 1; if (t[mid] <= T) lo = mid; else hi = mid; }
      k = lo; a = (T - t[lo]) / (t[hi] - t[lo]);
    }
    j = Math.min(k + 1, n - 1);
  }
  // point i (of `stride` points per sample) of series x at the current moment
  const at = (x, v, i = 0, stride = 1) => {
    const s = 3 * (stride * k + i), e = 3 * (stride * j + i);
    return v.set(x[s], x[s + 1], x[s + 2]).lerp(vb.set(x[e], x[e + 1], x[e + 2]), a);
  };
  function rod(mesh, i, p, q, radius) {         // instance i of mesh: a rod from p to q
    dir.subVectors(q, p);
    const len = dir.length();
    rodQ.setFromUnitVectors(Y, len > 0 ? dir.divideScalar(len) : Y);
    mesh.setMatrixAt(i, place.compose(dir.addVectors(p, q).multiplyScalar(0.5), rodQ,
                                      rodS.set(radius, len, radius)));
  }
  function pose(T) {
    now = Math.min(Math.max(T, t[0]), t[n - 1]);
    index(now);
    for (const m of movers) {
      if (m.p) at(m.p, m.g.position);
      if (m.q) m.g.quaternion.slerpQuaternions(qa.fromArray(m.q, 4 * k), qb.fromArray(m.q, 4 * j), a);
    }
    if (links.mesh) {
      for (let i = 0; i < links.a.length; i++)
        rod(links.mesh, i, at(links.a[i], p1), at(links.b[i], p2), S.size / 150);
      links.mesh.instanceMatrix.needsUpdate = true;
    }
    for (const f of flexes) {
      for (let i = 0; i < f.count; i++) {
        at(f.x, p2, i, f.count);
        if (f.rods && i > 0) rod(f.rods, i - 1, p1, p2, f.radius);
        f.balls.setMatrixAt(i, place.compose(p2, noTurn, rodS.setScalar(f.radius)));
        p1.copy(p2);
      }
      f.balls.instanceMatrix.needsUpdate = true;
      if (f.rods) f.rods.instanceMatrix.needsUpdate = true;
    }
    const shown = $("show-traces").checked;
    for (const line of traces) { line.geometry.setDrawRange(0, k + 1); line.visible = shown; }
    $("time").textContent = "t = " + now.toFixed(3) + " s";
    for (const o of outputs) {
      let text = "";
      for (let i = 0; i < o.width; i++) {
        const v = o.v[o.width * k + i], w = o.v[o.width * j + i];
        text += (i ? ", " : "") + Number((v + a * (w - v)).toPrecision(6));
      }
      o.value.textContent = o.width === 1 ? text : "[" + text + "]";
    }
    $("slider").value = String(Math.round(10000 * (now - t[0]) / Math.max(t[n - 1] - t[0], 1e-300)));
  }
  const objects = movers.length + S.links.length + flexes.length;
  function draw() {
    if (!playing && pace.reduced) resolution(false);
    renderer.render(scene, camera);
    if (cameraMoved) {                    // the camera's matrices, for a reader of the DOM
      $("camera").textContent = JSON.stringify({
        projection: camera.projectionMatrix.elements, view: camera.matrixWorldInverse.elements,
        width: renderer.domElement.clientWidth, height: renderer.domElement.clientHeight});
      cameraMoved = false;
    }
    const st = $("state").dataset;
    st.time = String(now); st.objects = String(objects);
    st.frames = String(n); st.playing = String(playing); st.ready = "1";
  }

  // playback
  let playing = true, speed = S.speed, last = null;
  const fps = {want: 0, stamps: [], script: []};
  // a renderer too slow for the page (software WebGL: it pays per pixel) plays at half
  // the resolution once two windows of 30 frames in a row have a median interval over
  // 25 ms (under 40 fps: not a start that warms up or a moment of load); a paused moment
  // is always drawn at full resolution
  const pace = {intervals: [], slow: 0, reduced: false};
  function resolution(reduced) {
    pace.reduced = reduced;
    renderer.setPixelRatio(reduced ? fullRatio / 2 : fullRatio);
  }
  $("speed").value = String(speed);
  if ($("speed").value !== String(speed)) {
    $("speed").append(new Option(String(speed))); $("speed").value = String(speed);
  }
  $("speed").addEventListener("change", e => { speed = Number(e.target.value); });
  $("play").addEventListener("click", () => { playing = !playing; last = null; $("play").textContent = playing ? "pause" : "play"; draw(); });
  $("slider").addEventListener("input", e => {
    playing = false; $("play").textContent = "play";
    pose(t[0] + Number(e.target.value) / 10000 * (t[n - 1] - t[0])); draw(); });
  $("show-traces").addEventListener("change", () => { pose(now); draw(); });
  function fromHash() {
    const h = new URLSearchParams(location.hash.slice(1));
    if (h.has("t")) {
      playing = false; $("play").textContent = "play";
      pose(Number(h.get("t")));
    } else pose(now);
    for (const id of ["hud", "controls"]) $(id).hidden = h.get("hud") === "0";
    if (h.has("fps")) {                   // a measurement starts from full resolution
      fps.want = Number(h.get("fps")); fps.stamps = []; fps.script = []; playing = true;
      resolution(false); pace.intervals = []; pace.slow = 0;
    }
    draw();
  }
  window.addEventListener("hashchange", fromHash);
  const median = x => x.slice().sort((a, b) => a - b)[x.length >> 1];
  function frame(stamp) {
    if (playing) {
      const start = performance.now();
      if (last !== null) {
        pace.intervals.push(stamp - last);
        if (pace.intervals.length === 30) {
          pace.slow = median(pace.intervals) > 25 ? pace.slow + 1 : 0;
          if (!pace.reduced && pace.slow === 2) resolution(true);
          pace.intervals = [];
        }
        let T = now + speed * (stamp - last) / 1000;
        if (T > t[n - 1]) T = t[0] + (T - t[0]) % Math.max(t[n - 1] - t[0], 1e-300);
        pose(T);
      }
      last = stamp;
      draw();
      if (fps.want && fps.stamps.length <= fps.want) {
        fps.stamps.push(stamp);
        fps.script.push(performance.now() - start);
        if (fps.stamps.length === fps.want + 1) {
          // the intervals, and the time this script took per frame (composing the poses,
          // handing the frame to WebGL; the rendering itself runs apart from it)
          const dt = fps.stamps.slice(1).map((s, i) => s - fps.stamps[i]).sort((a, b) => a - b);
          $("frametimes").textContent = JSON.stringify({frames: dt.length,
            mean_ms: dt.reduce((a, b) => a + b, 0) / dt.length, median_ms: dt[dt.length >> 1],
            p95_ms: dt[Math.floor(0.95 * (dt.length - 1))], script_ms: median(fps.script),
            pixel_ratio: renderer.getPixelRatio()});
        }
      }
    } else { last = null; pace.intervals = []; pace.slow = 0; }
    requestAnimationFrame(frame);
  }
  window.codegen = {THREE, scene, camera, renderer, pose, draw};
  placeCamera();
  fromHash();
  requestAnimationFrame(frame);
} catch (e) { fail(e); }
