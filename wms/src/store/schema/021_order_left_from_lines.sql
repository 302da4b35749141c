-- What an order has left in a wave is summed over its own lines (a few,
-- found by pick_lines_by_order) instead of kept in pick_left: the counter
-- row cost every scan a page of its own in the commit, more than the sum
-- of three lines costs to read. The wave's counter stays: a wave has
-- hundreds of lines.
DROP TRIGGER pick_left_line_added;
DROP TRIGGER pick_left_line_changed;
DROP TRIGGER pick_left_order_changed;
DROP TABLE pick_left;

CREATE TRIGGER wave_left_line_added AFTER INSERT ON pick_lines BEGIN
    UPDATE waves SET units_left = units_left + NEW.quantity - NEW.picked
    WHERE id = NEW.wave_id AND NOT EXISTS (
        SELECT 1 FROM orders WHERE id = NEW.order_id AND wave_id = NEW.wave_id AND status = 'cancelled');
END;

-- Lines never move between waves or orders; only what is wanted and what
-- is picked change.
CREATE TRIGGER wave_left_line_changed AFTER UPDATE OF quantity, picked ON pick_lines BEGIN
    UPDATE waves SET units_left = units_left + (NEW.quantity - NEW.picked) - (OLD.quantity - OLD.picked)
    WHERE id = NEW.wave_id AND NOT EXISTS (
        SELECT 1 FROM orders WHERE id = NEW.order_id AND wave_id = NEW.wave_id AND status = 'cancelled');
END;

-- An order cancelled in a wave takes what it had left out of the wave's
-- count (and gives it back if it stops being cancelled, or leaves the wave).
CREATE TRIGGER wave_left_order_changed AFTER UPDATE OF status, wave_id ON orders
WHEN (OLD.status = 'cancelled' AND OLD.wave_id IS NOT NULL)
  OR (NEW.status = 'cancelled' AND NEW.wave_id IS NOT NULL) BEGIN
    UPDATE waves SET units_left = units_left + COALESCE((
        SELECT SUM(quantity - picked) FROM pick_lines WHERE order_id = OLD.id AND +wave_id = OLD.wave_id), 0)
    WHERE id = OLD.wave_id AND OLD.status = 'cancelled';
    UPDATE waves SET units_left = units_left - COALESCE((
        SELECT SUM(quantity - picked) FROM pick_lines WHERE order_id = NEW.id AND +wave_id = NEW.wave_id), 0)
    WHERE id = NEW.wave_id AND NEW.status = 'cancelled';
END;
