/* The other half of the checker's negative control (pair_a.c). */
int nd_test_pair_a(int n);
int nd_test_pair_b(int n);

int nd_test_pair_b(int n)
{
    return n > 0 ? nd_test_pair_a(n - 1) : 1;
}
