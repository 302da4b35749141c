-- Every order row's version: 0 when written, one more on every change of
-- the row (a trigger, so no path that writes an order can forget it) and
-- on every change or removal of one of its lines. A reader that rendered
-- an order at a version can reuse what it rendered for as long as the
-- version stays (the order list's JSON, written once per change rather
-- than once per read). Lines are only ever added to an existing order
-- together with an update of the order (a split sets its total), so an
-- insertion needs no trigger of its own: a new order's lines come in its
-- own transaction, before any reader sees it.
ALTER TABLE orders ADD COLUMN version INTEGER NOT NULL DEFAULT 0;

-- The inner update changes the version, so it does not fire this again
-- (with or without recursive triggers).
CREATE TRIGGER orders_versioned AFTER UPDATE ON orders
WHEN NEW.version = OLD.version BEGIN
    UPDATE orders SET version = OLD.version + 1 WHERE id = NEW.id;
END;

CREATE TRIGGER order_lines_changed AFTER UPDATE ON order_lines BEGIN
    UPDATE orders SET version = version + 1 WHERE id = NEW.order_id;
END;

CREATE TRIGGER order_lines_removed AFTER DELETE ON order_lines BEGIN
    UPDATE orders SET version = version + 1 WHERE id = OLD.order_id;
END;
