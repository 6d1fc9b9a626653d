//! Go's `math/rand` (its seeded `rngSource` and the `Rand` methods the FGD simulator calls),
//! so that the arrival order, the clones and the node order of a run follow the reference
//! simulator's draws for the same seed (`src/math/rand/rng.go` and `rand.go`, Go 1).

use std::sync::OnceLock;

const LEN: usize = 607;
const TAP: usize = 273;
const MASK: i64 = i64::MAX;
const INT32_MAX: i64 = (1 << 31) - 1;

/// `rngCooked`: the seeding words, kept as data (`fixtures/fgd/go-rng-cooked.txt`).
fn cooked() -> &'static [i64; LEN] {
    static COOKED: OnceLock<[i64; LEN]> = OnceLock::new();
    COOKED.get_or_init(|| {
        let text = include_str!("../../fixtures/fgd/go-rng-cooked.txt");
        let words: Vec<i64> = (text.lines())
            .filter(|l| !l.starts_with('#'))
            .flat_map(str::split_whitespace)
            .map(|w| w.parse().expect("a word of the cooked table"))
            .collect();
        words.try_into().expect("607 cooked words")
    })
}

/// `seedrand`: x ↦ 48271·x mod (2³¹ − 1), by Schrage's method as Go computes it.
fn seed_step(x: i32) -> i32 {
    const A: i32 = 48271;
    const Q: i32 = 44488;
    const R: i32 = 3399;
    let (hi, lo) = (x / Q, x % Q);
    let x = A.wrapping_mul(lo).wrapping_sub(R.wrapping_mul(hi));
    if x < 0 { x + INT32_MAX as i32 } else { x }
}

/// A `rand.New(rand.NewSource(seed))`, or the global generator after `rand.Seed(seed)`.
#[derive(Clone)]
pub struct GoRand {
    tap: usize,
    feed: usize,
    vec: Box<[i64; LEN]>,
}

impl GoRand {
    /// `rngSource.Seed`.
    pub fn new(seed: i64) -> Self {
        let mut seed = seed % INT32_MAX;
        if seed < 0 {
            seed += INT32_MAX;
        }
        if seed == 0 {
            seed = 89_482_311;
        }
        let mut x = seed as i32;
        let mut vec = Box::new([0i64; LEN]);
        let cooked = cooked();
        for i in -20..LEN as i64 {
            x = seed_step(x);
            if i >= 0 {
                let mut u = i64::from(x) << 40;
                x = seed_step(x);
                u ^= i64::from(x) << 20;
                x = seed_step(x);
                u ^= i64::from(x);
                u ^= cooked[i as usize];
                vec[i as usize] = u & MASK;
            }
        }
        GoRand {
            tap: 0,
            feed: LEN - TAP,
            vec,
        }
    }

    /// `Int63`: a non-negative 63-bit number.
    pub fn int63(&mut self) -> i64 {
        self.tap = if self.tap == 0 { LEN - 1 } else { self.tap - 1 };
        self.feed = if self.feed == 0 {
            LEN - 1
        } else {
            self.feed - 1
        };
        let x = self.vec[self.feed].wrapping_add(self.vec[self.tap]) & MASK;
        self.vec[self.feed] = x;
        x
    }

    /// `Uint32`: the high 32 of the 63 bits.
    fn uint32(&mut self) -> u32 {
        (self.int63() >> 31) as u32
    }

    /// `Int31`: the high 31 bits.
    fn int31(&mut self) -> i32 {
        (self.int63() >> 32) as i32
    }

    /// `Int31n`: uniform in 0..n by rejection, n > 0.
    fn int31n(&mut self, n: i32) -> i32 {
        if n & (n - 1) == 0 {
            return self.int31() & (n - 1);
        }
        let max = (INT32_MAX - (1i64 << 31) % i64::from(n)) as i32;
        let mut v = self.int31();
        while v > max {
            v = self.int31();
        }
        v % n
    }

    /// `Intn` for n < 2³¹: uniform in 0..n.
    pub fn intn(&mut self, n: usize) -> usize {
        assert!(n > 0 && n <= INT32_MAX as usize, "Intn of {n}");
        self.int31n(n as i32) as usize
    }

    /// The unexported `int31n` Shuffle uses: Lemire's multiply-shift with rejection.
    fn int31n_lemire(&mut self, n: i32) -> i32 {
        let n32 = n as u32;
        let mut prod = u64::from(self.uint32()) * u64::from(n32);
        let mut low = prod as u32;
        if low < n32 {
            let thresh = n32.wrapping_neg() % n32;
            while low < thresh {
                prod = u64::from(self.uint32()) * u64::from(n32);
                low = prod as u32;
            }
        }
        (prod >> 32) as i32
    }

    /// `Shuffle` of `items` (fewer than 2³¹).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        assert!(
            items.len() <= INT32_MAX as usize,
            "Shuffle of {}",
            items.len()
        );
        for i in (1..items.len()).rev() {
            let j = self.int31n_lemire(i as i32 + 1) as usize;
            items.swap(i, j);
        }
    }

    /// `Perm(n)`.
    pub fn perm(&mut self, n: usize) -> Vec<usize> {
        let mut m = vec![0; n];
        for i in 0..n {
            let j = self.intn(i + 1);
            m[i] = m[j];
            m[j] = i;
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::GoRand;

    /// `rand.New(rand.NewSource(1)).Int63()`'s well-known first values (also what the
    /// unseeded global generator of Go before 1.20 printed).
    #[test]
    fn seed_one_gives_gos_first_numbers() {
        let mut r = GoRand::new(1);
        assert_eq!(r.int63(), 5_577_006_791_947_779_410);
        assert_eq!(r.int63(), 8_674_665_223_082_153_551);
    }

    #[test]
    fn perm_and_shuffle_are_permutations() {
        let mut r = GoRand::new(42);
        let mut p = r.perm(1213);
        p.sort_unstable();
        assert_eq!(p, (0..1213).collect::<Vec<_>>());
        let mut v: Vec<usize> = (0..100).collect();
        r.shuffle(&mut v);
        assert_ne!(v, (0..100).collect::<Vec<_>>());
        v.sort_unstable();
        assert_eq!(v, (0..100).collect::<Vec<_>>());
    }
}
