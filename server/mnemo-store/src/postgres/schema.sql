-- The shared store on PostgreSQL: the same tables as the SQLite file, with
-- the event log's guarantees enforced by the database. Events, notes,
-- anchors and the hash chain refuse UPDATE and DELETE in triggers (forget,
-- the one hard delete, will set `mnemo.forget` for its own transaction), and
-- the role mnemo writes with (mnemo_writer) is granted no UPDATE or DELETE
-- on them at all. Idempotent: run on every connect.
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE IF NOT EXISTS notes (
    id          BIGINT  PRIMARY KEY,
    workspace   TEXT    NOT NULL,
    kind        TEXT    NOT NULL CHECK (kind IN ('directive','task','gotcha','finding','reference','decision','operational')),
    priority    TEXT    NOT NULL CHECK (priority IN ('high','medium','low')),
    title       TEXT    NOT NULL CHECK (length(title) > 0),
    body        TEXT    NOT NULL,
    provenance  TEXT    NOT NULL CHECK (provenance IN ('auto','agent','user-stated','human')),
    quote       TEXT,
    created_at  BIGINT  NOT NULL
);
CREATE INDEX IF NOT EXISTS notes_by_workspace ON notes (workspace, kind, id);
-- Recall's lexical side in the database (search.rs): title and body as one
-- tsvector, the title weighted A and the body B, kept by PostgreSQL itself.
-- Words are split where FTS5 splits them, at every character that is not a
-- letter or a digit (`lock.rs` is `lock` and `rs`, not a file name), and a
-- number's plural `s` goes as FTS5's Porter stemmer drops it (`30s` is
-- `30`; Snowball, PostgreSQL's, keeps it; search.rs reads a query's words
-- the same way).
-- The configuration both read with: PostgreSQL's english stemmer without
-- its stopword list, since FTS5 indexes every word (a query of `before
-- after` or `not` finds notes there; recall leaves out its own few
-- stopwords, `lexical::STOPWORDS`, on both).
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_ts_dict WHERE dictname = 'mnemo_stem') THEN
        CREATE TEXT SEARCH DICTIONARY mnemo_stem (TEMPLATE = snowball, Language = english);
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_ts_config WHERE cfgname = 'mnemo') THEN
        CREATE TEXT SEARCH CONFIGURATION mnemo (COPY = english);
        ALTER TEXT SEARCH CONFIGURATION mnemo ALTER MAPPING
            FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part, numword, numhword, hword_numpart
            WITH mnemo_stem;
    END IF;
END $$;
CREATE OR REPLACE FUNCTION mnemo_words(raw TEXT) RETURNS TEXT LANGUAGE sql IMMUTABLE AS
    $$ SELECT regexp_replace(regexp_replace(raw, '[^[:alnum:]]+', ' ', 'g'), '([0-9])[sS]\M', '\1', 'g') $$;
ALTER TABLE notes ADD COLUMN IF NOT EXISTS search tsvector GENERATED ALWAYS AS
    (setweight(to_tsvector('mnemo', mnemo_words(title)), 'A')
     || setweight(to_tsvector('mnemo', mnemo_words(body)), 'B')) STORED;
CREATE INDEX IF NOT EXISTS notes_search ON notes USING gin (search);
-- What BM25 needs beyond the notes themselves, as FTS5 keeps it: each
-- word's postings (note_terms: in which notes, how often in the title and
-- in the body — search.rs weighs them by `lexical::TITLE_WEIGHT` as FTS5
-- does — and the note's length), how many notes hold each word (mnemo_terms),
-- how many notes there are and how many words they hold in all
-- (mnemo_text_stats). A trigger on notes writes the postings and stages
-- what the counts gain or lose (mnemo_text_deltas: only inserts, so a copy
-- of 100k notes in one transaction does not update one row 100k times);
-- every mnemo write folds them in before it commits (mnemo_fold_terms).
-- A note's length is its last word's position: stopwords count, as in FTS5.
-- Changing how words are read (mnemo_words, the configuration) or counted
-- needs a schema version that rebuilds `search` and these tables: neither
-- a generated column nor the postings are recomputed by re-running this.
CREATE OR REPLACE FUNCTION mnemo_token_count(doc tsvector) RETURNS BIGINT LANGUAGE sql IMMUTABLE AS
    $$ SELECT COALESCE(max(p), 0) FROM unnest(doc) u, unnest(u.positions) p $$;
CREATE TABLE IF NOT EXISTS note_terms (
    lexeme     TEXT    NOT NULL,
    workspace  TEXT    NOT NULL,
    note_id    BIGINT  NOT NULL,
    in_title   INT     NOT NULL,
    in_body    INT     NOT NULL,
    len        INT     NOT NULL,
    -- A query word's postings read from the index alone, in one run of it.
    PRIMARY KEY (lexeme, workspace, note_id) INCLUDE (in_title, in_body, len)
);
CREATE TABLE IF NOT EXISTS mnemo_terms (lexeme TEXT PRIMARY KEY, notes BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS mnemo_text_stats (
    one     BOOLEAN  PRIMARY KEY DEFAULT true CHECK (one),
    notes   BIGINT   NOT NULL,
    tokens  BIGINT   NOT NULL
);
-- One row per word of a note written (lexeme) or per note (lexeme NULL, with its length).
CREATE TABLE IF NOT EXISTS mnemo_text_deltas (lexeme TEXT, notes INT NOT NULL, tokens BIGINT NOT NULL);
CREATE OR REPLACE FUNCTION mnemo_postings(note BIGINT, home TEXT, doc tsvector)
RETURNS TABLE (lexeme TEXT, workspace TEXT, note_id BIGINT, in_title INT, in_body INT, len INT)
LANGUAGE sql IMMUTABLE AS $$
    SELECT u.lexeme, home, note, cardinality(array_positions(u.weights, 'A')),
           cardinality(u.weights) - cardinality(array_positions(u.weights, 'A')), mnemo_token_count(doc)::int
    FROM unnest(doc) u
$$;
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM mnemo_text_stats) THEN
        INSERT INTO mnemo_text_stats (notes, tokens)
            SELECT count(*), COALESCE(sum(mnemo_token_count(search)), 0) FROM notes;
        INSERT INTO mnemo_terms (lexeme, notes)
            SELECT lexeme, count(*) FROM notes, unnest(tsvector_to_array(search)) lexeme GROUP BY lexeme;
        INSERT INTO note_terms SELECT p.* FROM notes n, mnemo_postings(n.id, n.workspace, n.search) p;
    END IF;
END $$;
CREATE OR REPLACE FUNCTION mnemo_count_terms() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = public, pg_temp AS $$
DECLARE
    sign CONSTANT INT := CASE TG_OP WHEN 'INSERT' THEN 1 ELSE -1 END;
    doc CONSTANT tsvector := CASE TG_OP WHEN 'INSERT' THEN NEW.search ELSE OLD.search END;
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO note_terms SELECT * FROM mnemo_postings(NEW.id, NEW.workspace, doc);
    ELSE
        DELETE FROM note_terms
            WHERE lexeme = ANY (tsvector_to_array(doc)) AND workspace = OLD.workspace AND note_id = OLD.id;
    END IF;
    INSERT INTO mnemo_text_deltas (lexeme, notes, tokens)
        SELECT lexeme, sign, 0 FROM unnest(tsvector_to_array(doc)) lexeme
        UNION ALL SELECT NULL, sign, sign * mnemo_token_count(doc);
    RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION mnemo_fold_terms() RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = public, pg_temp AS $$
DECLARE emptied TEXT[];
BEGIN
    WITH taken AS (DELETE FROM mnemo_text_deltas RETURNING *),
    totals AS (
        UPDATE mnemo_text_stats SET notes = mnemo_text_stats.notes + f.notes, tokens = mnemo_text_stats.tokens + f.tokens
        FROM (SELECT COALESCE(sum(notes), 0) AS notes, COALESCE(sum(tokens), 0) AS tokens
              FROM taken WHERE lexeme IS NULL) f
        RETURNING 1),
    words AS (
        INSERT INTO mnemo_terms (lexeme, notes)
            SELECT lexeme, sum(notes) FROM taken WHERE lexeme IS NOT NULL GROUP BY lexeme
            ON CONFLICT (lexeme) DO UPDATE SET notes = mnemo_terms.notes + EXCLUDED.notes
        RETURNING lexeme, notes)
    SELECT array_agg(lexeme) FILTER (WHERE notes <= 0) INTO emptied FROM words, (SELECT count(*) FROM totals) t;
    -- A forgotten note's words leave no row behind that only it held.
    DELETE FROM mnemo_terms WHERE lexeme = ANY (emptied);
END $$;
REVOKE ALL ON FUNCTION mnemo_fold_terms() FROM PUBLIC;
CREATE OR REPLACE TRIGGER notes_count_terms AFTER INSERT OR DELETE ON notes
    FOR EACH ROW EXECUTE FUNCTION mnemo_count_terms();

CREATE TABLE IF NOT EXISTS anchors (
    note_id         BIGINT  NOT NULL REFERENCES notes (id),
    position        BIGINT  NOT NULL,
    path            TEXT    NOT NULL,
    start_line      BIGINT  NOT NULL,
    end_line        BIGINT  NOT NULL,
    content_sha256  TEXT,
    PRIMARY KEY (note_id, position)
);

CREATE TABLE IF NOT EXISTS events (
    id             BIGINT  PRIMARY KEY,
    note_id        BIGINT  NOT NULL REFERENCES notes (id),
    kind           TEXT    NOT NULL CHECK (kind IN ('created','superseded','revoked','stale_flagged','reinstated','promoted','expired','proposed','accepted')),
    actor          TEXT    NOT NULL CHECK (actor IN ('agent','human','system')),
    at             BIGINT  NOT NULL,
    reason         TEXT,
    superseded_by  BIGINT  REFERENCES notes (id),
    provenance     TEXT    CHECK (provenance IN ('auto','agent','user-stated','human')),
    person         TEXT,
    machine        TEXT
);
CREATE INDEX IF NOT EXISTS events_by_note ON events (note_id, id);

CREATE TABLE IF NOT EXISTS event_chain (event_id BIGINT PRIMARY KEY, hash TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS forgotten_events (event_id BIGINT PRIMARY KEY);

CREATE TABLE IF NOT EXISTS note_state (
    note_id        BIGINT  PRIMARY KEY REFERENCES notes (id),
    workspace      TEXT    NOT NULL,
    status         TEXT    NOT NULL,
    status_at      BIGINT  NOT NULL,
    status_reason  TEXT,
    superseded_by  BIGINT,
    provenance     TEXT    NOT NULL,
    live_since     BIGINT  NOT NULL,
    last_event_id  BIGINT  NOT NULL
);
CREATE INDEX IF NOT EXISTS note_state_by_workspace ON note_state (workspace, status);

CREATE TABLE IF NOT EXISTS drift_observations (
    note_id      BIGINT  NOT NULL REFERENCES notes (id),
    path         TEXT    NOT NULL,
    observation  TEXT    NOT NULL,
    observed_at  BIGINT  NOT NULL,
    PRIMARY KEY (note_id, path, observation)
);

CREATE TABLE IF NOT EXISTS deliveries (
    id         BIGINT  PRIMARY KEY,
    workspace  TEXT    NOT NULL,
    session    TEXT    NOT NULL,
    moment     TEXT    NOT NULL,
    at         BIGINT  NOT NULL,
    bytes      BIGINT  NOT NULL
);
CREATE TABLE IF NOT EXISTS delivered_notes (
    delivery_id  BIGINT  NOT NULL REFERENCES deliveries (id),
    note_id      BIGINT  NOT NULL,
    shown        TEXT    NOT NULL CHECK (shown IN ('full', 'listed')),
    PRIMARY KEY (delivery_id, note_id)
);

CREATE TABLE IF NOT EXISTS workspace_roots (
    root       TEXT    PRIMARY KEY,
    workspace  TEXT    NOT NULL,
    source     TEXT    NOT NULL,
    origin     TEXT,
    seen_at    BIGINT  NOT NULL
);
CREATE TABLE IF NOT EXISTS workspace_moves (
    from_id  TEXT    PRIMARY KEY,
    to_id    TEXT    NOT NULL,
    at       BIGINT  NOT NULL,
    root     TEXT
);
CREATE TABLE IF NOT EXISTS workspace_aliases (alias TEXT PRIMARY KEY, workspace TEXT NOT NULL);

-- Vectors: one row per chunk of a note (the model in vector_index); pgvector
-- without a fixed dimension, so a store moves whatever model it was made with.
CREATE TABLE IF NOT EXISTS vector_index (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS note_vectors (
    chunk      BIGINT  PRIMARY KEY,
    note_id    BIGINT  NOT NULL REFERENCES notes (id),
    workspace  TEXT    NOT NULL,
    embedding  vector  NOT NULL
);
CREATE INDEX IF NOT EXISTS note_vectors_by_note ON note_vectors (note_id);
CREATE INDEX IF NOT EXISTS note_vectors_by_workspace ON note_vectors (workspace);
CREATE TABLE IF NOT EXISTS note_token_signs (note_id BIGINT PRIMARY KEY REFERENCES notes (id), signs BYTEA NOT NULL);

CREATE OR REPLACE FUNCTION mnemo_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' AND current_setting('mnemo.forget', true) = 'on'
       AND TG_TABLE_NAME IN ('notes', 'anchors', 'events') THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'mnemo: % is append-only; % is not allowed', TG_TABLE_NAME, TG_OP;
END $$;

DO $$
DECLARE t TEXT;
BEGIN
    FOREACH t IN ARRAY ARRAY['notes', 'anchors', 'events', 'event_chain', 'forgotten_events', 'workspace_moves'] LOOP
        EXECUTE format('CREATE OR REPLACE TRIGGER %I BEFORE UPDATE OR DELETE ON %I FOR EACH ROW EXECUTE FUNCTION mnemo_append_only()',
                       t || '_are_append_only', t);
    END LOOP;
    -- A role is the server's, not one database's: another database may be making it right now.
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'mnemo_writer') THEN
        BEGIN
            CREATE ROLE mnemo_writer NOLOGIN;
        EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
        END;
    END IF;
END $$;

GRANT SELECT, INSERT ON ALL TABLES IN SCHEMA public TO mnemo_writer;
GRANT UPDATE ON note_state, deliveries, workspace_roots, workspace_aliases, vector_index, note_vectors, note_token_signs TO mnemo_writer;
GRANT DELETE ON deliveries, delivered_notes, note_state, note_vectors, note_token_signs, drift_observations TO mnemo_writer;
REVOKE UPDATE, DELETE ON notes, anchors, events, event_chain, forgotten_events, workspace_moves FROM mnemo_writer;
-- What recall's BM25 reads is written only by the trigger and the fold (as
-- their owner): a writer cannot skew the counts or plant postings.
REVOKE INSERT, UPDATE, DELETE ON note_terms, mnemo_terms, mnemo_text_stats, mnemo_text_deltas FROM mnemo_writer;

-- Replication to each machine's replica (replica.rs): every row written gets
-- the next `rev` (writers take one advisory lock, so revs commit in order),
-- and every deleted row is remembered in `removed` under its own rev, so a
-- replica pulls exactly what changed since the rev it has.
CREATE SEQUENCE IF NOT EXISTS mnemo_rev;
CREATE TABLE IF NOT EXISTS removed (
    rev  BIGINT  PRIMARY KEY DEFAULT nextval('mnemo_rev'),
    tbl  TEXT    NOT NULL,
    key  TEXT    NOT NULL
);
CREATE OR REPLACE FUNCTION mnemo_stamp_rev() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.rev := nextval('mnemo_rev');
    RETURN NEW;
END $$;
CREATE OR REPLACE FUNCTION mnemo_note_removal() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE k TEXT;
BEGIN
    EXECUTE format('SELECT json_build_array(%s)::text FROM (SELECT ($1).*) o', TG_ARGV[0]) INTO k USING OLD;
    INSERT INTO removed (tbl, key) VALUES (TG_TABLE_NAME, k);
    RETURN OLD;
END $$;

DO $$
DECLARE
    t TEXT;
    keys CONSTANT jsonb := '{"notes": "o.id", "anchors": "o.note_id, o.position", "events": "o.id",
        "event_chain": "o.event_id", "forgotten_events": "o.event_id", "note_state": "o.note_id",
        "drift_observations": "o.note_id, o.path, o.observation", "deliveries": "o.id",
        "delivered_notes": "o.delivery_id, o.note_id", "workspace_roots": "o.root", "workspace_moves": "o.from_id",
        "workspace_aliases": "o.alias", "vector_index": "o.key", "note_vectors": "o.chunk",
        "note_token_signs": "o.note_id"}';
BEGIN
    FOR t IN SELECT jsonb_object_keys(keys) LOOP
        EXECUTE format('ALTER TABLE %I ADD COLUMN IF NOT EXISTS rev BIGINT', t);
        EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON %I (rev)', t || '_by_rev', t);
        EXECUTE format('CREATE OR REPLACE TRIGGER %I BEFORE INSERT OR UPDATE ON %I FOR EACH ROW EXECUTE FUNCTION mnemo_stamp_rev()',
                       t || '_rev', t);
        EXECUTE format('CREATE OR REPLACE TRIGGER %I AFTER DELETE ON %I FOR EACH ROW EXECUTE FUNCTION mnemo_note_removal(%L)',
                       t || '_removal', t, keys ->> t);
    END LOOP;
END $$;

-- Forget, the one hard delete, through the one door: only a note whose
-- events are all recorded as forgotten (in this transaction, by the writer
-- that forgot it) loses its rows, and nothing else can be deleted this way.
CREATE OR REPLACE FUNCTION mnemo_forget(forgotten BIGINT) RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = public, pg_temp AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM events e WHERE e.note_id = forgotten
               AND NOT EXISTS (SELECT 1 FROM forgotten_events f WHERE f.event_id = e.id)) THEN
        RAISE EXCEPTION 'mnemo: note % is not forgotten (its events are not all in forgotten_events)', forgotten;
    END IF;
    PERFORM set_config('mnemo.forget', 'on', true);
    DELETE FROM note_vectors WHERE note_id = forgotten;
    DELETE FROM note_token_signs WHERE note_id = forgotten;
    DELETE FROM note_state WHERE note_id = forgotten;
    DELETE FROM drift_observations WHERE note_id = forgotten;
    DELETE FROM delivered_notes WHERE note_id = forgotten;
    DELETE FROM anchors WHERE note_id = forgotten;
    DELETE FROM events WHERE note_id = forgotten;
    DELETE FROM notes WHERE id = forgotten;
    PERFORM set_config('mnemo.forget', 'off', true);
END $$;
REVOKE ALL ON FUNCTION mnemo_forget(BIGINT) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mnemo_forget(BIGINT) TO mnemo_writer;
GRANT EXECUTE ON FUNCTION mnemo_fold_terms() TO mnemo_writer;
GRANT USAGE, SELECT ON SEQUENCE mnemo_rev TO mnemo_writer;

-- Which store this database is (a replica of another database under the
-- same URL is thrown away, not mixed in) and the schema it has.
CREATE TABLE IF NOT EXISTS mnemo_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO mnemo_meta (key, value) VALUES ('store_id', gen_random_uuid()::text) ON CONFLICT (key) DO NOTHING;
-- Never lowered: an older mnemo's schema run on a newer database leaves its version.
INSERT INTO mnemo_meta (key, value) VALUES ('schema', '3')
    ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value WHERE mnemo_meta.value::int < EXCLUDED.value::int;
GRANT SELECT, INSERT ON removed, mnemo_meta TO mnemo_writer;
