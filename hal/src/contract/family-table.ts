/**
 * An op family's methods as data. Each family folder (hal/src/families/<family>/) declares its methods as an
 * interface (LayoutMethods, ConvMethods, ...: what ComputeBackend promises) and implements them as one table,
 * typed `FamilyTable<LayoutMethods, LayoutHost>`, so the compiler holds the table to the interface: every
 * method present, none extra, each taking the interface's parameters and returning its result. BaseBackend
 * is composed from these tables in one place (FAMILIES, hal/src/base.ts), which `defineFamilyMethods` applies
 * to its prototype once.
 */
import { InvalidArgumentError } from '../core/errors.js';

/**
 * The implementation of an op family's methods interface `M`: for each method of M, a function with M's
 * parameters and result, called with `this` the backend seen as `Host` (what the family uses of a
 * BaseBackend, its protected members included: check, guard, route, the optional hooks). `Host` defaults
 * to `never`: the table with its host left out, as FAMILIES lists it (only BaseBackend's prototype calls it).
 */
export type FamilyTable<M, Host = never> = {
  readonly [K in keyof M]-?: M[K] extends (...args: infer A) => infer R ? (this: Host, ...args: A) => R : never;
};

/**
 * Defines every function of the `families` tables on `proto` as a method (writable, configurable, not
 * enumerable: as a class declares its methods). Throws InvalidArgumentError, before defining anything, when
 * two tables name the same method or a table names a member `proto` already has (a class method would
 * otherwise be replaced silently).
 */
export function defineFamilyMethods(proto: object, families: Readonly<Record<string, object>>): void {
  const owner = new Map<string, string>();
  for (const [family, table] of Object.entries(families)) {
    for (const name of Object.keys(table)) {
      const other = owner.get(name) ?? (Object.hasOwn(proto, name) ? 'the class' : undefined);
      if (other !== undefined)
        throw new InvalidArgumentError(`op family '${family}': method ${name} is already defined by ${other}`);
      owner.set(name, `family '${family}'`);
    }
  }
  for (const table of Object.values(families))
    for (const [name, value] of Object.entries(table))
      Object.defineProperty(proto, name, { value, writable: true, configurable: true });
}
