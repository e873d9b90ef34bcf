/**
 * TypeDoc plugin for the API reference (typedoc.json): things the TypeScript sources say once, in data,
 * that TypeDoc would otherwise show (and flag as undocumented) once per use.
 *
 * 1. Modules are named by their import specifier (`@polyhal/hal`, `@polyhal/hal/internal`; not `hal/src`).
 * 2. The op tables (`UNARY_OP_DEFS`, `ARRAY_OP_DEFS`, ... : `{ ... } as const satisfies Record<string, T>`):
 *    each entry is shown as a `T` (UnaryOpDef, ArrayOpDef, ...) whose summary is the entry's own `semantics`
 *    string (the text docs/OPS.md prints, read from the built @polyhal/hal), instead of the literal type
 *    TypeScript infers for it, whose fields (`f64`, `domain`, `grad`, ...) are documented once, on `T`.
 * 3. The methods derived from the op table by mapped types (ElementwiseMethods, ReduceMethods: `be.exp(x)`,
 *    `be.add(a, b)`, `be.sum(x, axes)`) have no declaration to carry a comment: each gets its op's `semantics`.
 * 4. A class member without a docstring shows the one it inherits or implements, across packages too.
 * 5. Members of anonymous object types are documented by the (documented) declaration that holds the type.
 * Everything else must carry its own docstring: `validation.notDocumented` with `treatWarningsAsErrors`.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Comment, Converter, ReferenceType, ReflectionKind } from 'typedoc';
import ts from 'typescript';
import { ARRAY_OP_DEFS, BINARY_OP_DEFS, REDUCE_OP_DEFS, UNARY_OP_DEFS } from '@polyhal/hal';

/**
 * The import specifier of entry file `file`: the npm name of the package.json nearest above it, plus the
 * subpath whose `polyhal-source` export is that file (`@polyhal/hal`, `@polyhal/hal/internal`).
 */
function packageNameOf(file) {
  for (let dir = dirname(file); dir !== dirname(dir); dir = dirname(dir)) {
    let manifest;
    try {
      manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    } catch {
      continue;
    }
    const entries = Object.entries(manifest.exports ?? {});
    const sub = entries.find(([, e]) => e?.['polyhal-source'] && resolve(dir, e['polyhal-source']) === resolve(file));
    return sub && sub[0] !== '.' ? `${manifest.name}${sub[0].slice(1)}` : manifest.name;
  }
  return undefined;
}

/** The op tables @polyhal/hal exports, by name: where each entry's `semantics` string is read. */
const OP_TABLES = new Map(Object.entries({ ARRAY_OP_DEFS, BINARY_OP_DEFS, REDUCE_OP_DEFS, UNARY_OP_DEFS }));

const textComment = (text) => new Comment([{ kind: 'text', text }]);

/** `{ ... } as const satisfies Record<string, T>` → `T`'s name, else undefined. */
function tableEntryTypeName(declaration) {
  const init = declaration && ts.isVariableDeclaration(declaration) ? declaration.initializer : undefined;
  if (!init || !ts.isSatisfiesExpression(init)) return undefined;
  const record = init.type;
  if (!ts.isTypeReferenceNode(record) || record.typeName.getText() !== 'Record') return undefined;
  const entry = record.typeArguments?.[1];
  return entry && ts.isTypeReferenceNode(entry) ? entry.typeName.getText() : undefined;
}

/** @param {import('typedoc').Application} app */
export function load(app) {
  app.converter.on(Converter.EVENT_RESOLVE_BEGIN, (context) => {
    const project = context.project;
    for (const mod of project.getReflectionsByKind(ReflectionKind.Module)) {
      const file =
        mod.sources?.[0]?.fullFileName ??
        context.getSymbolFromReflection(mod)?.declarations?.[0]?.getSourceFile().fileName;
      const name = file && packageNameOf(file);
      if (name) mod.name = name;
    }

    // 2. Op tables: entries typed by the table's entry type, summarized by their semantics.
    const semantics = new Map();
    for (const variable of project.getReflectionsByKind(ReflectionKind.Variable)) {
      const entryType = tableEntryTypeName(context.getSymbolFromReflection(variable)?.declarations?.[0]);
      const literal = variable.type?.type === 'reflection' ? variable.type.declaration : undefined;
      if (!entryType || !literal) continue;
      const target = project
        .getReflectionsByKind(ReflectionKind.Interface | ReflectionKind.TypeAlias)
        .find((r) => r.name === entryType);
      for (const entry of literal.children ?? []) {
        const text = OP_TABLES.get(variable.name)?.[entry.name]?.semantics;
        if (text) semantics.set(entry.name, text);
        if (!entry.hasComment() && text) entry.comment = textComment(text);
        if (target && entry.type?.type === 'reflection') {
          project.removeReflection(entry.type.declaration);
          entry.type = ReferenceType.createResolvedReference(entryType, target, project);
        }
      }
    }

    // 3. Members made by mapped types over the op table's keys: no declaration, so no comment of their own.
    for (const member of project.getReflectionsByKind(ReflectionKind.Property)) {
      if (member.hasComment() || !semantics.has(member.name)) continue;
      const symbol = context.getSymbolFromReflection(member);
      if (symbol?.declarations?.length) continue;
      member.comment = textComment(semantics.get(member.name));
    }
  });

  // 4. A class member without a docstring of its own shows the one it inherits, overrides or implements.
  // TypeDoc copies these itself, except across entry points: CpuBackend (backends/cpu) inherits
  // BaseBackend's members (hal) through a reference it leaves unresolved, so the lookup is by name here.
  app.converter.on(
    Converter.EVENT_RESOLVE_END,
    (context) => {
      const project = context.project;
      const members = Object.values(project.reflections).filter((r) =>
        r.parent?.kindOf(ReflectionKind.ClassOrInterface),
      );
      const byName = new Map();
      const key = (r) => `${r.parent.name}.${r.name}`;
      for (const r of members) byName.set(key(r), [...(byName.get(key(r)) ?? []), r]);
      const commentOf = (r) =>
        r?.hasComment() ? r.comment : (r?.signatures ?? [r?.getSignature]).find((s) => s?.hasComment())?.comment;
      const sourceComment = (ref) =>
        ref && (commentOf(ref.reflection) ?? byName.get(ref.name)?.map(commentOf).find(Boolean));
      for (let changed = true; changed; ) {
        changed = false;
        for (const r of members) {
          if (commentOf(r)) continue;
          const comment = [r.inheritedFrom, r.overwrites, r.implementationOf].map(sourceComment).find(Boolean);
          if (!comment) continue;
          for (const target of r.signatures ?? [r.getSignature ?? r]) if (target) target.comment = comment.clone();
          changed = true;
        }
      }

      // 5. The members of an anonymous object type (`{ loss: NDArray; grad?: NDArray }` as a return type, a
      // property's or an alias's type) are not exports of their own: the declaration holding the type documents
      // them, and must itself be documented. The rest of the validation is TypeDoc's own.
      const exempt = new Set();
      const member = ReflectionKind.Property | ReflectionKind.Method | ReflectionKind.Accessor;
      const inParameter = (r) => !!r && (r.kindOf(ReflectionKind.Parameter) || inParameter(r.parent));
      for (const r of Object.values(project.reflections)) {
        if (!r.kindOf(member) || commentOf(r) || !r.parent?.kindOf(ReflectionKind.TypeLiteral)) continue;
        if (inParameter(r)) continue; // TypeDoc's validation skips these itself
        let holder = r.parent;
        while (
          holder &&
          (holder.kindOf(ReflectionKind.TypeLiteral) || holder.parent?.kindOf(ReflectionKind.TypeLiteral))
        )
          holder = holder.parent;
        if (commentOf(holder) || (holder?.kindOf(ReflectionKind.SomeSignature) && commentOf(holder.parent)))
          exempt.add(r.getFriendlyFullName());
      }
      const listed = app.options.getValue('intentionallyNotDocumented');
      app.options.setValue('intentionallyNotDocumented', [...listed, ...exempt]);
    },
    -100,
  );
}
