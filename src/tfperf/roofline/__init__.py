"""How close is this to what the hardware can do: FLOPs and bytes per op (``flops``), per
traced function (``graph``) and per XLA cluster (``hlo``), and the roofs they are judged
against, per precision and engine (``roofs``)."""
