// "Your move, noticed": the tab's title and icon change when it is this phone's move (shared-link
// and real-time pages), the phone buzzes briefly, and — only when switched on — a soft ballpoint
// scratch is heard while ink is drawn (synthesised with WebAudio: filtered noise, no sound files).

const TITLE = "Dotfight";
const YOUR_MOVE_TITLE = "(1) Your move — Dotfight";
const icon = (extra) => `data:image/svg+xml,${encodeURIComponent(
  `<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'><circle cx='8' cy='8' r='4' fill='#1d3a9e'/>${extra}</svg>`)}`;
const ICON = icon("");
const YOUR_MOVE_ICON = icon("<circle cx='12.5' cy='3.5' r='3.5' fill='#c3262d'/>");
const SOUND_KEY = "dotfight.penSound";

/** Shows (or takes off) the "your move" mark in the tab's title and icon. */
export function markYourMove(on) {
  document.title = on ? YOUR_MOVE_TITLE : TITLE;
  let link = document.querySelector("link[rel=icon]");
  if (!link) {
    link = document.createElement("link");
    link.rel = "icon";
    document.head.append(link);
  }
  const href = on ? YOUR_MOVE_ICON : ICON;
  if (link.getAttribute("href") !== href) link.setAttribute("href", href);
}

/** A short buzz where the phone can (navigator.vibrate). */
export function buzz() {
  try {
    if (navigator.vibrate) navigator.vibrate([60, 40, 60]);
  } catch {
    // Not allowed before the first touch: the title still says it.
  }
}

/** Whether the pen sound is switched on (off unless the player chose it). */
export function penSoundOn() {
  try {
    return localStorage.getItem(SOUND_KEY) === "on";
  } catch {
    return false;
  }
}

/** Switches the pen sound on or off (kept on this device). */
export function setPenSound(on) {
  try {
    localStorage.setItem(SOUND_KEY, on ? "on" : "off");
  } catch {
    // Storage blocked: the choice lasts for this visit only.
  }
  soundOverride = on;
}

let soundOverride = null;
let audio = null;
let noise = null;

/** A soft pen scratch lasting `seconds` (nothing unless the pen sound is on). */
export function penScratch(seconds) {
  const on = soundOverride ?? penSoundOn();
  if (!on || !window.AudioContext) return;
  try {
    if (!audio) {
      audio = new AudioContext();
      // One second of white noise, reused for every line.
      noise = audio.createBuffer(1, audio.sampleRate, audio.sampleRate);
      const data = noise.getChannelData(0);
      for (let i = 0; i < data.length; i++) data[i] = Math.random() * 2 - 1;
    }
    const t0 = audio.currentTime;
    const len = Math.max(0.08, Math.min(3, seconds));
    const src = audio.createBufferSource();
    src.buffer = noise;
    src.loop = true;
    const band = audio.createBiquadFilter();
    band.type = "bandpass";
    band.frequency.value = 3200;
    band.Q.value = 0.9;
    const gain = audio.createGain();
    gain.gain.setValueAtTime(0, t0);
    gain.gain.linearRampToValueAtTime(0.05, t0 + 0.03);
    gain.gain.setValueAtTime(0.05, t0 + len - 0.05);
    gain.gain.linearRampToValueAtTime(0, t0 + len);
    src.connect(band).connect(gain).connect(audio.destination);
    src.start(t0);
    src.stop(t0 + len + 0.02);
  } catch {
    // No audio on this device: the page stays silent.
  }
}
