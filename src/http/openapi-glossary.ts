// The API's vocabulary: a field name means one thing across every route, so its description and its example values
// are written once and given to every property of that name that does not describe itself (openapi-content.ts). A
// route's own `.describe()` always wins. The vocabulary has two halves: Gatehouse's own objects
// (openapi-glossary-core.ts) and the fields of the standards it speaks (openapi-glossary-protocols.ts).
import { type Gloss, PRODUCT_GLOSSARY } from './openapi-glossary-core.js';
import { PROTOCOL_GLOSSARY } from './openapi-glossary-protocols.js';

export type { Gloss };

const GLOSSARY: Record<string, Gloss[]> = { ...PRODUCT_GLOSSARY, ...PROTOCOL_GLOSSARY };

/** The gloss for a property of an object with these field names, or undefined. */
export function glossFor(name: string, fields: readonly string[]): Gloss | undefined {
  const entries = Object.hasOwn(GLOSSARY, name) ? GLOSSARY[name]! : undefined;
  if (!entries) return undefined;
  return (
    entries.find((e) => e.alone && fields.length === 1) ??
    entries.find((e) => e.when?.some((f) => fields.includes(f))) ??
    entries.find((e) => e.when === undefined && !e.alone)
  );
}
