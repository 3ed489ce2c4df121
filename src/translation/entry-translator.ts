import type { ContentService, ProjectView } from '../application/content-service.ts';
import { assertCan } from '../domain/access/permissions.ts';
import { conflict, notFound } from '../domain/domain-error.ts';
import { requirePlan } from '../domain/plans.ts';
import type { Principal } from '../domain/principal.ts';
import type { LogByPosition } from '../event-store/event-store.ts';
import type { ReadModelReader } from '../read-models/read-model-reader.ts';
import { contentQueries, type ContentQueries } from '../../projections/content-queries.ts';
import { applyEntryTranslation, planEntryTranslation, planSize, type TranslationUnit } from './entry-translation.ts';
import type { TranslationProvider } from './translation-provider.ts';

/** The plan that includes AI locale translation (spec section 8). */
export const TRANSLATION_PLAN = 'standard';

export interface TranslateInput {
  sourceLocale?: string | undefined;
  targetLocales?: string[] | undefined;
}

export interface TranslateResult {
  /** The new draft revision ({id, revisionId, entryId, revision, status, updatedAt}); null when nothing was missing. */
  revision: Record<string, unknown> | null;
  sourceLocale: string;
  targetLocales: string[];
  /** The values filled: field and locale. */
  translated: Array<{ field: string; locale: string }>;
  /** Values left as they were, and why. */
  skipped: Array<{ field: string; locale: string; reason: 'has-value' | 'no-source-value' }>;
  /** Characters sent to the provider. */
  characters: number;
}

/**
 * translate_entry_locales (spec sections 4.4 and 8): fills the missing locale values of an entry's latest
 * revision by machine translation and saves the result as a new draft revision, through the content
 * service (same validation and permissions as save_revision). Checked before any provider call, in this
 * order: permission, plan (Standard and above), a provider being configured, the entry, the latest
 * revision accepting a save (not in review or scheduled), the locales. The save states the revision it
 * was based on, so an edit made meanwhile answers REVISION_CONFLICT instead of being overwritten.
 */
export class EntryTranslator {
  constructor(
    private readonly deps: {
      content: ContentService;
      reader: ReadModelReader;
      /** Where revisions' snapshots are read. */
      log: LogByPosition;
      /** Unset when TRANSLATION_API_URL is not configured. */
      provider: TranslationProvider | undefined;
    },
  ) {
    this.#content = contentQueries(deps.reader, deps.log);
  }

  readonly #content: ContentQueries;

  async translate(principal: Principal, project: ProjectView, entryId: string, input: TranslateInput): Promise<TranslateResult> {
    assertCan(principal, 'revisions.save');
    requirePlan(project.plan, TRANSLATION_PLAN, 'AI locale translation (translate_entry_locales)');
    const provider = this.deps.provider;
    if (!provider) {
      throw conflict(
        'No translation provider is configured on this service, so entries cannot be translated.',
        'The operator sets TRANSLATION_API_URL to a DeepL-compatible endpoint (for example https://api-free.deepl.com/v2/translate) and TRANSLATION_API_KEY to its key, then restarts the service.',
      );
    }
    const entry = await this.#content.entry(entryId);
    if (!entry || entry.projectId !== project.projectId) throw notFound(`No entry ${entryId} in this project.`);
    const latest = entry.latestRevision;
    if (!latest) throw conflict(`Entry ${entryId} has no revision to translate.`, 'Save a revision first (save_revision).');
    if (latest.status === 'pending_review' || latest.status === 'scheduled') {
      throw conflict(
        `Revision ${latest.revision} is ${latest.status}: a translated revision cannot be saved while the latest revision is ${latest.status}.`,
        'Withdraw the revision (back to draft) first, then translate.',
      );
    }
    const revision = await this.deps.content.revisionOrFail(project, latest.revisionId);
    const formSet = await this.deps.content.formSetOrFail(project, entry.formSetId);
    const plan = planEntryTranslation({
      fields: formSet.definition.fields,
      snapshot: revision.snapshot,
      locales: project.contentLocales,
      sourceLocale: input.sourceLocale,
      targetLocales: input.targetLocales,
    });
    const skipped = plan.skipped.map((s) => ({ field: s.field, locale: s.targetLocale, reason: s.reason }));
    const result = { sourceLocale: plan.sourceLocale, targetLocales: plan.targetLocales, skipped, characters: planSize(plan).characters };
    if (plan.units.length === 0) return { ...result, revision: null, translated: [] };

    const translations = await translateUnits(provider, plan.sourceLocale, plan.units);
    const snapshot = applyEntryTranslation(revision.snapshot, plan, translations);
    const saved = await this.deps.content.saveRevision(principal, project, entryId, { fields: snapshot, expectedRevision: latest.revision });
    return {
      ...result,
      revision: saved.body as Record<string, unknown>,
      translated: plan.units.map((u) => ({ field: u.field, locale: u.targetLocale })),
    };
  }
}

/** One provider call per (target locale, plain or HTML), each unit's segments taken back in order. */
async function translateUnits(provider: TranslationProvider, sourceLocale: string, units: readonly TranslationUnit[]): Promise<string[][]> {
  const out: string[][] = units.map(() => []);
  const groups = new Map<string, number[]>();
  units.forEach((unit, index) => {
    const key = `${unit.targetLocale}\u0000${unit.kind}`;
    groups.set(key, [...(groups.get(key) ?? []), index]);
  });
  for (const indexes of groups.values()) {
    const first = units[indexes[0]!]!;
    const texts = indexes.flatMap((i) => units[i]!.segments);
    const translated = await provider.translate({ texts, sourceLocale, targetLocale: first.targetLocale, html: first.kind === 'html' });
    let at = 0;
    for (const i of indexes) {
      const count = units[i]!.segments.length;
      out[i] = translated.slice(at, at + count);
      at += count;
    }
  }
  return out;
}
