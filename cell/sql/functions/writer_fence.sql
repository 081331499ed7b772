-- The writer's epoch fence as one function for every SQL function that writes: a writer whose epoch is
-- fenced gets SQLSTATE EF001, with the current epoch as DETAIL (cell/src/db/tx.ts maps it).
CREATE OR REPLACE FUNCTION writer_fence(p_cell_id text, p_epoch bigint) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  current_epoch bigint;
BEGIN
  SELECT e.epoch INTO current_epoch FROM cell_epoch e WHERE e.cell_id = p_cell_id FOR SHARE;
  IF current_epoch IS DISTINCT FROM p_epoch THEN
    RAISE EXCEPTION 'cell % writer epoch % is fenced', p_cell_id, p_epoch
      USING ERRCODE = 'EF001', DETAIL = coalesce(current_epoch::text, '');
  END IF;
END $$;
