-- SSCCs: a parcel's own GS1 identity, numbered from the business's company
-- prefix in blocks granted to one node each (the cloud grants them, and
-- every node keeps the grants of its business), so boxes offline for days
-- never number two parcels alike.
ALTER TABLE businesses ADD COLUMN gs1_company_prefix TEXT;

CREATE TABLE sscc_blocks (
    business_id  INTEGER NOT NULL REFERENCES businesses (id),
    prefix       TEXT NOT NULL,
    -- Serials: the extension digit and serial reference as one number.
    first        INTEGER NOT NULL,
    last         INTEGER NOT NULL,
    node         INTEGER NOT NULL,
    granted_at   TEXT NOT NULL,
    PRIMARY KEY (business_id, prefix, first)
) WITHOUT ROWID;
CREATE INDEX sscc_blocks_by_node ON sscc_blocks (business_id, node, prefix, first);

-- A package's SSCC, unique everywhere; and when it was scanned onto its
-- dispatch run's vehicle.
ALTER TABLE packages ADD COLUMN sscc TEXT;
ALTER TABLE packages ADD COLUMN loaded_at TEXT;
CREATE UNIQUE INDEX packages_by_sscc ON packages (sscc) WHERE sscc IS NOT NULL;
