// The one mail builder: plain text and HTML from the same paragraphs, every interpolated value escaped.
import type { MailMessage } from './mail.js';

const esc = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export function build(
  template: string,
  to: string,
  subject: string,
  paragraphs: string[],
  action?: { label: string; url: string },
): MailMessage {
  const text = [...paragraphs, ...(action ? [`${action.label}: ${action.url}`] : []), '', '— Gatehouse'].join('\n\n');
  const html = [
    '<!doctype html><html><body style="font-family:sans-serif">',
    ...paragraphs.map((p) => `<p>${esc(p)}</p>`),
    action ? `<p><a href="${esc(action.url)}">${esc(action.label)}</a></p>` : '',
    '<p>— Gatehouse</p></body></html>',
  ].join('\n');
  return { template, to, subject, text, html };
}
