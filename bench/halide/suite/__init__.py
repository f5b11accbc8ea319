"""One module per pipeline of the suite, each mirroring
`apps/src/suite/<name>.rs` of our repository (the same algorithm, the same
Func names, the same arithmetic, so that outputs compare bit for bit or
within the float tolerance) and exposing:

    algorithm(hl, params, app) -> dict
        Defines the pipeline's Funcs (fresh ones on every call) from
        `params` (input name -> hl.ImageParam) and the manifest entry `app`;
        returns them by name, the output under the output's name. Keys
        starting with "_" hold other objects (RDoms).

The suite's pipelines have no expert schedule: they are scheduled by
Halide's autoschedulers only (and `--kinds naive` checks a port).
"""
