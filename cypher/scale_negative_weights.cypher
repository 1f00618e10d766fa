// Multiply every positive Paper.negative_weight by $factor: p(i) = count(i)^a / sum_k count(k)^a changes its
// normaliser when an update changes any citation count (gnn/cocitation/delta.py; the touched papers are then rewritten).
// parameters: $factor (FLOAT, old normaliser / new normaliser)
// returns: nothing
MATCH (p:Paper)
WHERE p.negative_weight > 0
SET p.negative_weight = p.negative_weight * $factor
