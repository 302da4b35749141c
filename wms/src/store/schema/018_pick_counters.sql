-- What is left to pick, kept as the lines change instead of summed over a
-- wave's lines on every scan: per wave (leaving out the lines of its
-- cancelled orders, as a scan's answer does) and per order within a wave.
-- Triggers keep them, so every path that writes pick lines or order
-- statuses (scans here, picks replicated from other nodes, cancellations)
-- keeps them right without knowing of them.
ALTER TABLE waves ADD COLUMN units_left INTEGER NOT NULL DEFAULT 0;

CREATE TABLE pick_left (
    wave_id      INTEGER NOT NULL,
    order_id     INTEGER NOT NULL,
    units        INTEGER NOT NULL,
    PRIMARY KEY (wave_id, order_id)
) WITHOUT ROWID;

INSERT INTO pick_left (wave_id, order_id, units)
    SELECT wave_id, order_id, SUM(quantity - picked) FROM pick_lines GROUP BY wave_id, order_id;

UPDATE waves SET units_left = COALESCE((
    SELECT SUM(p.units) FROM pick_left p
    WHERE p.wave_id = waves.id
      AND p.order_id NOT IN (SELECT id FROM orders WHERE wave_id = waves.id AND status = 'cancelled')), 0);

CREATE TRIGGER pick_left_line_added AFTER INSERT ON pick_lines BEGIN
    INSERT INTO pick_left (wave_id, order_id, units)
        VALUES (NEW.wave_id, NEW.order_id, NEW.quantity - NEW.picked)
        ON CONFLICT (wave_id, order_id) DO UPDATE SET units = units + excluded.units;
    UPDATE waves SET units_left = units_left + NEW.quantity - NEW.picked
    WHERE id = NEW.wave_id AND NOT EXISTS (
        SELECT 1 FROM orders WHERE id = NEW.order_id AND wave_id = NEW.wave_id AND status = 'cancelled');
END;

-- Lines never move between waves or orders; only what is wanted and what
-- is picked change.
CREATE TRIGGER pick_left_line_changed AFTER UPDATE OF quantity, picked ON pick_lines BEGIN
    UPDATE pick_left SET units = units + (NEW.quantity - NEW.picked) - (OLD.quantity - OLD.picked)
    WHERE wave_id = NEW.wave_id AND order_id = NEW.order_id;
    UPDATE waves SET units_left = units_left + (NEW.quantity - NEW.picked) - (OLD.quantity - OLD.picked)
    WHERE id = NEW.wave_id AND NOT EXISTS (
        SELECT 1 FROM orders WHERE id = NEW.order_id AND wave_id = NEW.wave_id AND status = 'cancelled');
END;

-- An order cancelled in a wave takes what it had left out of the wave's
-- count (and gives it back if it stops being cancelled, or leaves the wave).
CREATE TRIGGER pick_left_order_changed AFTER UPDATE OF status, wave_id ON orders
WHEN (OLD.status = 'cancelled' AND OLD.wave_id IS NOT NULL)
  OR (NEW.status = 'cancelled' AND NEW.wave_id IS NOT NULL) BEGIN
    UPDATE waves SET units_left = units_left + COALESCE((
        SELECT units FROM pick_left WHERE wave_id = OLD.wave_id AND order_id = OLD.id), 0)
    WHERE id = OLD.wave_id AND OLD.status = 'cancelled';
    UPDATE waves SET units_left = units_left - COALESCE((
        SELECT units FROM pick_left WHERE wave_id = NEW.wave_id AND order_id = NEW.id), 0)
    WHERE id = NEW.wave_id AND NEW.status = 'cancelled';
END;

-- It served the sums the counters replace, and every pick paid to keep it.
DROP INDEX pick_lines_left;
