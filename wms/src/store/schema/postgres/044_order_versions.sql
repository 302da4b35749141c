-- Every order row's version: see the SQLite migration of the same number.
-- Here the row's own change bumps it before it is written.
ALTER TABLE orders ADD COLUMN version BIGINT NOT NULL DEFAULT 0;

CREATE FUNCTION order_versioned() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.version := OLD.version + 1;
    RETURN NEW;
END $$;

CREATE FUNCTION order_line_versioned() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        UPDATE orders SET version = version + 1 WHERE id = OLD.order_id;
    ELSE
        UPDATE orders SET version = version + 1 WHERE id = NEW.order_id;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER orders_versioned BEFORE UPDATE ON orders
    FOR EACH ROW EXECUTE FUNCTION order_versioned();
CREATE TRIGGER order_lines_changed AFTER UPDATE ON order_lines
    FOR EACH ROW EXECUTE FUNCTION order_line_versioned();
CREATE TRIGGER order_lines_removed AFTER DELETE ON order_lines
    FOR EACH ROW EXECUTE FUNCTION order_line_versioned();
