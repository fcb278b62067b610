-- The reference stack's source table, mirrored to the stream pg-items by the
-- Postgres → stream direction.
CREATE TABLE items (
    id serial PRIMARY KEY,
    title text NOT NULL,
    body text,
    created_at timestamptz DEFAULT now()
);
