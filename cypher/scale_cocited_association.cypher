// Multiply every CO_CITED edge's association strength by $factor: N c / (s_i s_j) scales with N, the number
// of citing papers, when an update changes N (gnn/cocitation/delta.py; the touched pairs are then rewritten).
// parameters: $factor (FLOAT, N_new / N_old)
// returns: nothing
MATCH ()-[r:CO_CITED]->()
SET r.association = r.association * $factor
