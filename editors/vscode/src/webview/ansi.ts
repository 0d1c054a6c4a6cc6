// A command's output with its ANSI colours, for the bash cards' terminal block. anser turns the
// escapes into classes (media/chat.css gives the 16 colours the terminal theme's own); the
// 256-colour and true-colour ones are set through the DOM, since the view's CSP refuses inline
// `style` attributes.
import Anser from 'anser';

/** Fills `block` with `output`, escaped, coloured. */
export function renderAnsi(block: HTMLElement, output: string): void {
  block.innerHTML = Anser.ansiToHtml(Anser.escapeForHtml(output), { use_classes: true });
  for (const span of Array.from(block.querySelectorAll<HTMLElement>('span[class*="ansi-"]'))) {
    for (const layer of ['fg', 'bg'] as const) {
      const color = extendedColor(span, layer);
      if (!color) continue;
      if (layer === 'fg') span.style.color = color;
      else span.style.backgroundColor = color;
    }
  }
}

/** The colour of an `ansi-palette-N-fg` (N ≥ 16) or `ansi-truecolor-fg` span, as CSS. */
function extendedColor(span: HTMLElement, layer: 'fg' | 'bg'): string | undefined {
  const truecolor = span.dataset[layer === 'fg' ? 'ansiTruecolorFg' : 'ansiTruecolorBg'];
  if (truecolor) return `rgb(${truecolor})`;
  const palette = new RegExp(`ansi-palette-(\\d+)-${layer}`).exec(span.className);
  return palette ? paletteColor(Number(palette[1])) : undefined;
}

const BASIC = ['Black', 'Red', 'Green', 'Yellow', 'Blue', 'Magenta', 'Cyan', 'White'];

/** xterm's 256 colours: the 16 of the theme, a 6×6×6 cube, then 24 greys. */
export function paletteColor(index: number): string | undefined {
  if (index < 0 || index > 255) return undefined;
  if (index < 16) return `var(--vscode-terminal-ansi${index < 8 ? '' : 'Bright'}${BASIC[index % 8]})`;
  if (index >= 232) {
    const grey = 8 + (index - 232) * 10;
    return `rgb(${grey}, ${grey}, ${grey})`;
  }
  const cube = index - 16;
  const level = (value: number) => (value === 0 ? 0 : 55 + value * 40);
  return `rgb(${level(Math.floor(cube / 36))}, ${level(Math.floor(cube / 6) % 6)}, ${level(cube % 6)})`;
}
