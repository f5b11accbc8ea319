//! The non-recursive part of Canny's edge detector on an 8-bit grayscale
//! image, as OpenCV's `Canny` computes it (without the hysteresis flood
//! fill): a 5x5 Gaussian blur ([1 4 6 4 1] along x then y, rounded back to
//! 8 bits), the 3x3 Sobel derivatives, the gradient magnitude
//! `sqrt(gx^2 + gy^2)`, its direction quantized to four sectors with
//! OpenCV's fixed-point tangent test (tan 22.5 in 15-bit fixed point),
//! non-maximum suppression against the two neighbours across the edge
//! (OpenCV's comparisons, strict on one side), and the double threshold:
//! 255 for a local maximum above 100, 128 above 40, else 0. Repeat-edge
//! boundary.

use crate::{pick, App, Size};
use compiler::ir::types::{ScalarType, Type};
use compiler::lang::boundary::repeat_edge;
use compiler::lang::ops::{abs, cast, select, sqrt, CompareExt};
use compiler::lang::{Func, ImageParam, Pipeline, Var};
use compiler::target::Target;

/// tan(22.5 degrees) in 15-bit fixed point, as OpenCV's `TG22`.
const TG22: i32 = 13573;
/// The double threshold on the gradient magnitude.
const LOW: f32 = 40.0;
const HIGH: f32 = 100.0;

/// The Canny pipeline at `size`: a 1920x1080 image (40x30 small).
pub fn app(size: Size, _host: &Target) -> App {
    let (w, h) = pick(size, (1920, 1080), (40, 30));
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", ScalarType::U8, 2);
    let clamped = repeat_edge(&input);
    let at = |f: &Func, dx: i32, dy: i32| f.at([&x + dx, &y + dy]);
    let blur_x = Func::new("blur_x");
    let c = |dx: i32| cast(Type::i32(), clamped.at([&x + dx, y.expr()]));
    blur_x.define(&[&x, &y], c(-2) + c(-1) * 4 + c(0) * 6 + c(1) * 4 + c(2));
    let blurred = Func::new("blurred");
    let b = |dy: i32| at(&blur_x, 0, dy);
    blurred.define(&[&x, &y], (b(-2) + b(-1) * 4 + b(0) * 6 + b(1) * 4 + b(2) + 128) >> 8);
    let gx = Func::new("gx");
    let column = |dx: i32| at(&blurred, dx, -1) + at(&blurred, dx, 0) * 2 + at(&blurred, dx, 1);
    gx.define(&[&x, &y], column(1) - column(-1));
    let gy = Func::new("gy");
    let row = |dy: i32| at(&blurred, -1, dy) + at(&blurred, 0, dy) * 2 + at(&blurred, 1, dy);
    gy.define(&[&x, &y], row(1) - row(-1));
    let magnitude = Func::new("magnitude");
    let (dx, dy) = (at(&gx, 0, 0), at(&gy, 0, 0));
    magnitude.define(&[&x, &y], sqrt(cast(Type::f32(), dx.clone() * dx.clone() + dy.clone() * dy.clone())));
    // 0: across the edge is along x; 2: along y; 1 and 3: the diagonals
    // (gradient components of one sign, or of opposite signs).
    let direction = Func::new("direction");
    let (ax, ay) = (abs(dx.clone()), abs(dy.clone()) << 15);
    let tg22 = ax.clone() * TG22;
    let tg67 = tg22.clone() + (ax << 16);
    direction.define(&[&x, &y], cast(Type::u8(), select(ay.lt(tg22), 0, select(ay.gt(tg67), 2, select((dx ^ dy).lt(0), 3, 1)))));
    let m = || at(&magnitude, 0, 0);
    let beats = |dx: i32, dy: i32| m().gt(at(&magnitude, dx, dy));
    let holds = |dx: i32, dy: i32| m().ge(at(&magnitude, dx, dy));
    let d = at(&direction, 0, 0);
    let local_max = select(
        d.eq_(0),
        beats(-1, 0) & holds(1, 0),
        select(d.eq_(2), beats(0, -1) & holds(0, 1), select(d.eq_(1), beats(-1, -1) & beats(1, 1), beats(1, -1) & beats(-1, 1))),
    );
    let output = Func::new("output");
    output.define(&[&x, &y], cast(Type::u8(), select(local_max.clone() & m().gt(HIGH), 255, select(local_max & m().gt(LOW), 128, 0))));
    let pipeline = Pipeline::new(&[&output]).expect("canny is well formed");
    let image = vec![(0, w), (0, h)];
    App { name: "canny", pipeline, expert: None, inputs: vec![("input".into(), image.clone())], output: image, params: vec![] }
}
