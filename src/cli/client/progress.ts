// The waiting line of `gatehouse login`: on a terminal a spinner with the time left, redrawn in
// place; elsewhere (a pipe, a log) one line when waiting starts and one when the pace changes.
import type { DeviceLoginView, DeviceStart } from './device-login.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

const clock = (seconds: number) => `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;

export function progressView(out: NodeJS.WriteStream, print: (line: string) => void): DeviceLoginView {
  const tty = out.isTTY === true;
  let timer: NodeJS.Timeout | undefined;
  let frame = 0;
  let state = { secondsLeft: 0, interval: 0, slowedDown: false };
  let announced = false;
  let lastInterval = 0;
  let deadline = 0;
  const draw = () => {
    const left = Math.max(0, Math.ceil((deadline - Date.now()) / 1000));
    out.write(
      `\r\x1b[2K${FRAMES[frame++ % FRAMES.length]} Waiting for approval in the browser… code expires in ${clock(left)}${state.slowedDown ? ` (polling every ${state.interval} s)` : ''}`,
    );
  };
  return {
    started(start: DeviceStart) {
      deadline = start.expiresAt;
      print(
        `To sign in, open this page in a browser:\n\n  ${start.verificationUriComplete}\n\nand check that it shows this code:\n\n  ${start.userCode}\n`,
      );
    },
    waiting(s) {
      state = s;
      if (tty) {
        if (!timer) timer = setInterval(draw, 100);
        return;
      }
      if (!announced) print(`Waiting for approval (the code expires in ${clock(s.secondsLeft)}; Ctrl-C cancels)…`);
      else if (s.interval !== lastInterval) print(`The server asked to poll more slowly: every ${s.interval} seconds.`);
      announced = true;
      lastInterval = s.interval;
    },
    stopped() {
      if (timer) {
        clearInterval(timer);
        out.write('\r\x1b[2K');
      }
      timer = undefined;
    },
  };
}
