/** A two-line rate chart on a canvas: published and delivered per second over the last minutes. */

export interface RatePoint {
  at: number;
  published: number;
  delivered: number;
}

const COLORS = { published: '#2563eb', delivered: '#d97706' } as const;

function niceMax(value: number): number {
  if (value <= 10) return 10;
  const step = 10 ** Math.floor(Math.log10(value));
  return Math.ceil(value / step) * step;
}

export function drawChart(canvas: HTMLCanvasElement, points: readonly RatePoint[]): void {
  const ctx = canvas.getContext('2d');
  if (ctx === null) return;
  const { width, height } = canvas;
  const left = 56;
  const bottom = height - 18;
  ctx.clearRect(0, 0, width, height);
  ctx.font = '11px system-ui, sans-serif';
  ctx.fillStyle = '#4a5563';
  ctx.strokeStyle = '#d7dce2';
  const max = niceMax(Math.max(0, ...points.flatMap((p) => [p.published, p.delivered])));
  for (let i = 0; i <= 4; i++) {
    const y = bottom - (i / 4) * (bottom - 8);
    ctx.beginPath();
    ctx.moveTo(left, y);
    ctx.lineTo(width, y);
    ctx.stroke();
    ctx.fillText(((max * i) / 4).toLocaleString('en-US'), 4, y + 4);
  }
  const now = points.at(-1)?.at ?? Date.now();
  // At least a minute wide, growing with what is kept (up to five minutes).
  const span = Math.max(60_000, now - (points[0]?.at ?? now));
  ctx.fillText(`${Math.round(span / 60_000)} min ago`, left, height - 4);
  ctx.fillText('now', width - 24, height - 4);
  for (const key of ['published', 'delivered'] as const) {
    ctx.strokeStyle = COLORS[key];
    ctx.lineWidth = 2;
    ctx.beginPath();
    points.forEach((p, i) => {
      const x = left + ((p.at - (now - span)) / span) * (width - left);
      const y = bottom - (p[key] / max) * (bottom - 8);
      if (i === 0) ctx.moveTo(x, y);
      else ctx.lineTo(x, y);
    });
    ctx.stroke();
    ctx.lineWidth = 1;
  }
  ctx.fillStyle = COLORS.published;
  ctx.fillText('— published', width - 170, 12);
  ctx.fillStyle = COLORS.delivered;
  ctx.fillText('— delivered', width - 90, 12);
}
