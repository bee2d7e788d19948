//! Dense symmetric positive-definite systems: Cholesky factorisation, solve, inverse.
//!
//! The information matrix of a fit has one row per free bot (plus the advantage), a few
//! hundred at most, so a plain O(m³) factorisation is all it needs.

/// A square matrix stored row by row.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Matrix {
    pub(crate) size: usize,
    pub(crate) data: Vec<f64>,
}

impl Matrix {
    pub(crate) fn zeros(size: usize) -> Matrix {
        Matrix {
            size,
            data: vec![0.0; size * size],
        }
    }

    pub(crate) fn get(&self, row: usize, col: usize) -> f64 {
        self.data[row * self.size + col]
    }

    pub(crate) fn add(&mut self, row: usize, col: usize, value: f64) {
        self.data[row * self.size + col] += value;
    }
}

/// The lower-triangular factor L of A = L·Lᵀ.
pub(crate) struct Cholesky {
    l: Matrix,
}

/// The matrix is not (numerically) positive definite: some direction has no information.
#[derive(Debug)]
pub(crate) struct NotPositiveDefinite;

impl Cholesky {
    /// Factors `a`. A pivot that falls to 1e-12 of its diagonal element (or below) means
    /// the matrix is singular up to rounding: reported, not divided by.
    pub(crate) fn new(a: &Matrix) -> Result<Cholesky, NotPositiveDefinite> {
        let m = a.size;
        let mut l = Matrix::zeros(m);
        for j in 0..m {
            let diag = a.get(j, j);
            let mut pivot = diag;
            for k in 0..j {
                pivot -= l.get(j, k) * l.get(j, k);
            }
            let positive = pivot > 1e-12 * diag.abs();
            if !positive || !pivot.is_finite() {
                return Err(NotPositiveDefinite);
            }
            let ljj = pivot.sqrt();
            l.data[j * m + j] = ljj;
            for i in j + 1..m {
                let mut s = a.get(i, j);
                for k in 0..j {
                    s -= l.get(i, k) * l.get(j, k);
                }
                l.data[i * m + j] = s / ljj;
            }
        }
        Ok(Cholesky { l })
    }

    /// Solves A·x = b.
    pub(crate) fn solve(&self, b: &[f64]) -> Vec<f64> {
        let m = self.l.size;
        let mut y = b.to_vec();
        // L·z = b, then Lᵀ·x = z.
        for i in 0..m {
            let s: f64 = (0..i).map(|k| self.l.get(i, k) * y[k]).sum();
            y[i] = (y[i] - s) / self.l.get(i, i);
        }
        for i in (0..m).rev() {
            let s: f64 = (i + 1..m).map(|k| self.l.get(k, i) * y[k]).sum();
            y[i] = (y[i] - s) / self.l.get(i, i);
        }
        y
    }

    /// A⁻¹, symmetric.
    pub(crate) fn inverse(&self) -> Matrix {
        let m = self.l.size;
        let mut inv = Matrix::zeros(m);
        let mut e = vec![0.0; m];
        for col in 0..m {
            e.iter_mut().for_each(|x| *x = 0.0);
            e[col] = 1.0;
            let x = self.solve(&e);
            for (row, value) in x.into_iter().enumerate() {
                inv.data[row * m + col] = value;
            }
        }
        // Symmetrise: the two triangles differ by rounding only.
        for i in 0..m {
            for j in i + 1..m {
                let v = 0.5 * (inv.get(i, j) + inv.get(j, i));
                inv.data[i * m + j] = v;
                inv.data[j * m + i] = v;
            }
        }
        inv
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solves_and_inverts_a_known_matrix() {
        // A = [[4, 2], [2, 3]]: det 8, inverse [[3, -2], [-2, 4]] / 8.
        let a = Matrix {
            size: 2,
            data: vec![4.0, 2.0, 2.0, 3.0],
        };
        let c = Cholesky::new(&a).unwrap();
        let x = c.solve(&[2.0, 1.0]);
        assert!((x[0] - 0.5).abs() < 1e-15 && x[1].abs() < 1e-15);
        let inv = c.inverse();
        let expected = [0.375, -0.25, -0.25, 0.5];
        for (got, want) in inv.data.iter().zip(expected) {
            assert!((got - want).abs() < 1e-15);
        }
    }

    #[test]
    fn refuses_a_singular_matrix() {
        let a = Matrix {
            size: 2,
            data: vec![1.0, 1.0, 1.0, 1.0],
        };
        assert!(Cholesky::new(&a).is_err());
        let b = Matrix {
            size: 2,
            data: vec![1.0, 0.0, 0.0, -1.0],
        };
        assert!(Cholesky::new(&b).is_err());
    }
}
