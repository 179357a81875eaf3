// The player of codegen.animation's pages: reads the scene (JSON, the series in base64),
// builds it with three.js (inlined as text, imported from a blob: no server, no network),
// and plays it. #t=SECONDS shows that moment, paused; #hud=0 hides the time, the values and
// the controls (for pictures); #fps=N plays and writes the intervals of N animation frames
// into #frametimes.
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

  const renderer = new THREE.WebGLRenderer({antialias: false, preserveDrawingBuffer: true});
  renderer.setPixelRatio(window.devicePixelRatio);
  renderer.setSize(window.innerWidth, window.innerHeight);
  document.body.prepend(renderer.domElement);
  const scene = new THREE.Scene();
  scene.background = new THREE.Color(0xf2f2f2);
  const hemi = new THREE.HemisphereLight(0xffffff, 0x777777, 2.2);
  hemi.position.copy(up);
  scene.add(hemi);
  const sun = new THREE.DirectionalLight(0xffffff, 1.2);
  scene.add(sun);

  // ground grid through the origin, normal to up; world axes at the origin
  let reach = 0;
  for (const x of Object.values(points))
    for (let i = 0; i < x.length; i += 3) {
      const p = new THREE.Vector3(x[i], x[i + 1], x[i + 2]);
      reach = Math.max(reach, p.sub(up.clone().multiplyScalar(p.dot(up))).length());
    }
  const step = Math.pow(10, Math.floor(Math.log10(Math.max(S.size, 1e-3) / 4)));
  const cells = 2 * Math.ceil((reach + S.size / 2) / step) + 2;
  const grid = new THREE.GridHelper(cells * step, cells, 0x888888, 0xc8c8c8);
  grid.quaternion.setFromUnitVectors(new THREE.Vector3(0, 1, 0), up);
  scene.add(grid);
  scene.add(new THREE.AxesHelper(0.4 * S.size));

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
    else if (o.kind === "sphere") geometry = new THREE.SphereGeometry(o.radius, 32, 16);
    else if (o.kind === "cylinder") {
      geometry = new THREE.CylinderGeometry(o.radius, o.radius, o.length, 48);
      if (o.axis === "x") geometry.rotateZ(-Math.PI / 2);
      if (o.axis === "z") geometry.rotateX(Math.PI / 2);
    } else {
      geometry = new THREE.BufferGeometry();
      geometry.setAttribute("position", new THREE.BufferAttribute(decode(o.vertices, Float32Array), 3));
      geometry.setIndex(new THREE.BufferAttribute(decode(o.faces, Uint32Array), 1));
      geometry.computeVertexNormals();
    }
    const mesh = new THREE.Mesh(geometry, new THREE.MeshStandardMaterial(
      {color: o.color, roughness: 0.65, metalness: 0.05, side: THREE.DoubleSide,
       transparent: o.opacity < 1, opacity: o.opacity, depthWrite: o.opacity === 1}));
    mesh.position.set(...o.offset);
    mesh.quaternion.set(...o.rotation);
    holder(o.frame, o.point).add(mesh);
  }
  for (const tr of S.triads) holder(tr.frame, tr.point).add(new THREE.AxesHelper(0.25 * S.size));

  const unitRod = new THREE.CylinderGeometry(1, 1, 1, 12);
  const rodMaterial = new THREE.MeshStandardMaterial({color: 0x505050, roughness: 0.5});
  const links = S.links.map(([a, b]) => {
    const m = new THREE.Mesh(unitRod, rodMaterial);
    scene.add(m);
    return {m, a: points[a], b: points[b]};
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
  function placeCamera() {
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
    draw();
  });
  canvas.addEventListener("wheel", e => {
    e.preventDefault();
    orbit.radius *= Math.exp(0.001 * e.deltaY);
    draw();
  }, {passive: false});
  window.addEventListener("resize", () => {
    camera.aspect = window.innerWidth / window.innerHeight;
    camera.updateProjectionMatrix();
    renderer.setSize(window.innerWidth, window.innerHeight);
    draw();
  });

  // the pose at time T: positions interpolated linearly, orientations by slerp
  const outputs = Object.entries(S.outputs).map(([name, o]) => ({name, width: o.width, v: decode(o.values, Float32Array)}));
  const qa = new THREE.Quaternion(), qb = new THREE.Quaternion(), va = new THREE.Vector3(), vb = new THREE.Vector3();
  const Y = new THREE.Vector3(0, 1, 0);
  let now = t[0];
  function index(T) {
    let lo = 0, hi = n - 1;
    if (T <= t[0] || n === 1) return [0, 0];
    if (T >= t[n - 1]) return [n - 1, 0];
    while (hi - lo > 1) { const mid = (lo + hi) >> 1; if (t[mid] <= T) lo = mid; else hi = mid; }
    return [lo, (T - t[lo]) / (t[hi] - t[lo])];
  }
  const at = (x, k, a, v) => { const j = Math.min(k + 1, n - 1);
    return v.set(x[3 * k], x[3 * k + 1], x[3 * k + 2]).lerp(vb.set(x[3 * j], x[3 * j + 1], x[3 * j + 2]), a); };
  function pose(T) {
    now = Math.min(Math.max(T, t[0]), t[n - 1]);
    const [k, a] = index(now), j = Math.min(k + 1, n - 1);
    for (const m of movers) {
      if (m.p) at(m.p, k, a, m.g.position);
      if (m.q) m.g.quaternion.slerpQuaternions(qa.fromArray(m.q, 4 * k), qb.fromArray(m.q, 4 * j), a);
    }
    for (const l of links) {
      const p = at(l.a, k, a, new THREE.Vector3()), q = at(l.b, k, a, new THREE.Vector3());
      const d = q.clone().sub(p), len = d.length();
      l.m.position.copy(p).addScaledVector(d, 0.5);
      l.m.quaternion.setFromUnitVectors(Y, len > 0 ? d.divideScalar(len) : Y);
      l.m.scale.set(S.size / 150, len, S.size / 150);
    }
    for (const line of traces) { line.geometry.setDrawRange(0, k + 1); line.visible = $("show-traces").checked; }
    $("time").textContent = "t = " + now.toFixed(3) + " s";
    $("values").innerHTML = "";
    for (const o of outputs) {
      const row = Array.from(o.v.subarray(o.width * k, o.width * (k + 1)), (v, i) => {
        const w = o.v[o.width * j + i];
        return Number((v + a * (w - v)).toPrecision(6));
      });
      const div = document.createElement("div");
      div.innerHTML = '<span class="name"></span> = ';
      div.firstChild.textContent = o.name;
      div.append(o.width === 1 ? String(row[0]) : "[" + row.join(", ") + "]");
      $("values").append(div);
    }
    $("slider").value = String(Math.round(10000 * (now - t[0]) / Math.max(t[n - 1] - t[0], 1e-300)));
  }
  function draw() {
    placeCamera();
    camera.updateMatrixWorld();
    renderer.render(scene, camera);
    $("camera").textContent = JSON.stringify({
      projection: camera.projectionMatrix.elements, view: camera.matrixWorldInverse.elements,
      width: renderer.domElement.clientWidth, height: renderer.domElement.clientHeight});
    const st = $("state").dataset;
    st.time = String(now); st.objects = String(movers.length + links.length);
    st.frames = String(n); st.playing = String(playing); st.ready = "1";
  }

  // playback
  let playing = true, speed = S.speed, last = null;
  const fps = {want: 0, stamps: []};
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
    if (h.has("fps")) { fps.want = Number(h.get("fps")); fps.stamps = []; playing = true; }
    draw();
  }
  window.addEventListener("hashchange", fromHash);
  function frame(stamp) {
    if (playing) {
      if (last !== null) {
        let T = now + speed * (stamp - last) / 1000;
        if (T > t[n - 1]) T = t[0] + (T - t[0]) % Math.max(t[n - 1] - t[0], 1e-300);
        pose(T);
      }
      last = stamp;
      draw();
      if (fps.want && fps.stamps.length <= fps.want) {
        fps.stamps.push(stamp);
        if (fps.stamps.length === fps.want + 1) {
          const dt = fps.stamps.slice(1).map((s, i) => s - fps.stamps[i]).sort((a, b) => a - b);
          $("frametimes").textContent = JSON.stringify({frames: dt.length,
            mean_ms: dt.reduce((a, b) => a + b, 0) / dt.length, median_ms: dt[dt.length >> 1],
            p95_ms: dt[Math.floor(0.95 * (dt.length - 1))]});
        }
      }
    } else last = null;
    requestAnimationFrame(frame);
  }
  fromHash();
  requestAnimationFrame(frame);
} catch (e) { fail(e); }
