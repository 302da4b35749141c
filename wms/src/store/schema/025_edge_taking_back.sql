-- Cloud side: an edge whose last hello said its own log is certain only
-- through this seq (restored from a backup, or a new box), and which is
-- taking back from the cloud what it applied after it. NULL once a hello
-- says the log is whole.
ALTER TABLE edges ADD COLUMN taking_back_after INTEGER;
