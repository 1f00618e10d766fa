"""Hyperbolic geometry of the taxonomy: classes and papers in the Poincaré ball (curvature −1).

=============  ==========================================================================================
``poincare``   the ball's geometry as small pure functions (Möbius addition, distance, exp/log maps)
``hierarchy``  the taxonomy as a tree, Sarkar's tree embedding, reconstruction quality (MAP)
``embedding``  Poincaré embeddings of a hierarchy (Nickel & Kiela, 2017), refined from the tree
``map``        h_θ: any fused-size vector (a class's, a paper's text) into the ball, trained on the hierarchy
``compute``    ``citegraph compute hyperbolic``: class and paper points written back, h_θ saved with the models
=============  ==========================================================================================
"""

from __future__ import annotations

from gnn.hyperbolic.compute import HyperbolicSettings, compute_hyperbolic, paper_points

__all__ = ["HyperbolicSettings", "compute_hyperbolic", "paper_points"]
