/* The checker's negative control: pair_a.c and pair_b.c call each other,
 * so mutual_calls.py must report them (ctest mutual_calls_control). */
int nd_test_pair_b(int n);
int nd_test_pair_a(int n);

int nd_test_pair_a(int n)
{
    return n > 0 ? nd_test_pair_b(n - 1) : 0;
}
