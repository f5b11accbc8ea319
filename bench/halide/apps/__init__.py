"""One module per benchmark app, each mirroring `apps/src/<name>.rs` of our
repository and exposing the same interface:

    algorithm(hl, params, app) -> dict
        Defines the app's Funcs (fresh ones on every call) from `params`
        (input name -> hl.ImageParam) and the manifest entry `app` (its
        regions and, under "size", the manifest's size); returns them by
        name, the output under the output's name. Keys starting with "_"
        hold other objects the schedule needs (RDoms).

    expert(hl, funcs, lanes, app)
        Applies the hand-written schedule, translated directive by
        directive from ours; `lanes(t)` is the host's natural vector lanes
        for Halide type `t`.
"""
