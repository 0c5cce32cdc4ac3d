// Route types for the test client, derived from the generated OpenAPI types (web/src/api/schema.d.ts, written by
// `npm run gen:api` from the app's /openapi.json): nothing here is written by hand per route.
//
// A test writes a concrete path (`/orgs/organizations/${id}?limit=5`); the client maps it to its OpenAPI path
// pattern ('/api/v1/orgs/organizations/{id}') per method, so the request body is checked against the route's body
// schema and the response body is typed as the route's success body, the error envelope's fields optional.
import type { components, paths } from '../../web/src/api/schema.js';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** The path a test writes for an OpenAPI key: the client adds the /api/v1 prefix; /healthz is sent as it is. */
type ShortPath<K> = K extends `/api/v1${infer R}` ? R : K extends '/healthz' ? K : never;

/** The routes the client reaches, keyed by the path a test writes. */
type Routes = { [K in keyof paths as ShortPath<K>]: paths[K] };

/** The operation of a method on a route (never when the route has no such method). */
type Operation<M extends Method, K> = K extends keyof Routes ? Exclude<Routes[K][M], undefined> : never;

/** '/orgs/organizations/{id}' → `/orgs/organizations/${string}`. */
type Template<K extends string> = K extends `${infer A}{${string}}${infer B}` ? `${A}${string}${Template<B>}` : K;

/** The route patterns that answer a method, each with the paths that reach it. */
type Patterns<M extends Method> = {
  [K in keyof Routes as [Operation<M, K>] extends [never] ? never : K]: Template<K & string>;
};

type Pattern<M extends Method> = Patterns<M>[keyof Patterns<M>];

/** Every path a method accepts: the pattern, with or without the /api/v1 prefix and a query string. */
export type PathOf<M extends Method> =
  | Pattern<M>
  | `${Pattern<M>}?${string}`
  | `/api/v1${Pattern<M>}`
  | `/api/v1${Pattern<M>}?${string}`;

type StripQuery<P extends string> = P extends `${infer B}?${string}` ? B : P;
type StripPrefix<P extends string> = P extends `/api/v1${infer R}` ? (R extends '' ? P : R) : P;
type Normal<P extends string> = StripPrefix<StripQuery<P>>;

/** The patterns a concrete path matches; of several ('/users/me' and '/users/{id}'), the most specific. */
type Candidates<M extends Method, P extends string> = {
  [K in keyof Patterns<M>]: P extends Patterns<M>[K] ? K : never;
}[keyof Patterns<M>];

type MostSpecific<M extends Method, C extends keyof Patterns<M>> = {
  [K in C]: [{ [J in Exclude<C, K>]: Patterns<M>[J] extends Patterns<M>[K] ? J : never }[Exclude<C, K>]] extends [never]
    ? K
    : never;
}[C];

/** The path itself when a route answers it with the method, else a type no string is (naming the problem). */
export type Checked<M extends Method, P extends string> = [RouteOf<M, P>] extends [never]
  ? `no ${Uppercase<M>} route has this path`
  : P;

/** The route key a concrete path reaches with a method. */
export type RouteOf<M extends Method, P extends string> =
  Normal<P> extends keyof Patterns<M> ? Normal<P> : MostSpecific<M, Candidates<M, Normal<P>>>;

type OperationOf<M extends Method, P extends string> = Operation<M, RouteOf<M, P>>;

// ---- request body ----

type JsonContent<C> = C extends { 'application/json': infer J }
  ? J
  : C extends { 'application/scim+json': infer J }
    ? J
    : C extends { [type: string]: infer T }
      ? T
      : never;

/**
 * A body as a test may write it: arrays may be readonly (`as const`), and where the schema lets any further key
 * through (`[key: string]: unknown`) any object is taken, interfaces of other libraries included (their
 * WebAuthn JSON), which TypeScript never finds assignable to an `unknown` index signature.
 */
type Input<T> = unknown extends T
  ? any
  : T extends readonly (infer E)[]
    ? readonly Input<E>[]
    : T extends object
      ? { [K in keyof T]: Input<T[K]> }
      : T;

/** The JSON body a route takes (never when it takes none). */
export type RequestBody<M extends Method, P extends string> =
  OperationOf<M, P> extends { requestBody?: infer B }
    ? B extends { content: infer C }
      ? Input<JsonContent<C>>
      : never
    : never;

/** The body argument: required when the route requires one, optional otherwise; `{}` at most when it takes none. */
export type BodyArgs<M extends Method, P extends string, Opts> =
  OperationOf<M, P> extends { requestBody: { content: unknown } }
    ? [body: RequestBody<M, P>, opts?: Opts]
    : [RequestBody<M, P>] extends [never]
      ? [body?: Record<string, never>, opts?: Opts]
      : [body?: RequestBody<M, P>, opts?: Opts];

// ---- response body ----

type SuccessStatus = 200 | 201 | 202 | 203 | 204 | 206 | 207;

type ResponseContent<R> = R extends { content: infer C } ? JsonContent<C> : undefined;

/** The union of the bodies of a route's 2xx answers (undefined for an answer without content). */
type SuccessBody<O> = O extends { responses: infer Rs }
  ? { [S in keyof Rs]: S extends SuccessStatus ? ResponseContent<Rs[S]> : never }[keyof Rs]
  : never;

type WithoutIndex<T> = { [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K] };

/**
 * The error envelope's fields (src/http/errors.ts), all optional: present on any non-2xx answer. `details` is free
 * form per code (validation_failed: fieldErrors/formErrors, weak_password: feedback), hence any.
 */
export type ErrorFields = Partial<Omit<WithoutIndex<components['schemas']['Error']>, 'details'>> & { details?: any };

type IsUnion<T, U = T> = T extends unknown ? ([U] extends [T] ? false : true) : never;
type KeysOfUnion<U> = U extends unknown ? keyof U : never;
type ValueIn<U, K extends PropertyKey> = U extends unknown ? (K extends keyof U ? U[K] : never) : never;

/**
 * A union of object bodies (login's TokenResponse | MfaChallenge) read as one object with every member's keys: a
 * test asserts which answer it got by the fields it reads (`res.body.mfaRequired`), without narrowing first.
 */
type Merged<U> = true extends IsUnion<U> ? { [K in KeysOfUnion<U>]: ValueIn<U, K> } : U;

type WithErrorFields<S> = [S] extends [never]
  ? ErrorFields
  : [S] extends [string]
    ? S & ErrorFields
    : S & Omit<ErrorFields, keyof S>;

/**
 * An answer as a test reads it: where the schema leaves an object open (`[key: string]: unknown`: WebAuthn options,
 * settings) its further keys read as any, and an object the schema says nothing more of is any; closed objects stay
 * closed (reading a field they lack fails).
 */
type Output<T> = unknown extends T
  ? any
  : T extends readonly (infer E)[]
    ? Output<E>[]
    : T extends object
      ? string extends keyof T
        ? [keyof WithoutIndex<T>] extends [never]
          ? any
          : { [K in keyof T]: Output<T[K]> }
        : { [K in keyof T]: Output<T[K]> }
      : T;

/** The body a test reads: the route's 2xx body, the error envelope's fields optional. */
export type ResponseBody<M extends Method, P extends string> = WithErrorFields<
  Merged<Output<Exclude<SuccessBody<OperationOf<M, P>>, undefined>>>
>;
