-- Buyer search folds accents away ("munoz" finds Muñoz): the terms are
-- written again, folded, by the migration's hook (store::crm::buyers::reindex).
DELETE FROM buyer_terms;
