-- Rulings on findings (several reviewers, contradictions). `arbitrations.ruling`
-- is the arbiter's valid `UPHELD:` / `RETIRED:` pair with the two findings'
-- summaries and whether it was applied (a guardrail that overrode the verdict
-- records it without applying it); `escalations.answer_ruling` is the same
-- pair when a human's chosen option kept one finding of a contradiction. Both
-- are JSON text, NULL when there is no ruling; the summaries are copied in
-- because a finding's label means something else in the next task.
ALTER TABLE arbitrations ADD COLUMN ruling TEXT;
ALTER TABLE escalations ADD COLUMN answer_ruling TEXT
