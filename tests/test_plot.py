"""soadyn.plot: the sparsity picture and its data ([Jain12, §7]). The geometric zeros it
reports are checked against a closed form (a joint whose axis the next body's angular
momentum never leaves), and a generic tree has none; the picture shows |M| exactly where
the topology allows it; ``soadyn info --sparsity`` writes it."""
import numpy as np
import pytest

import soadyn as sd
from soadyn import cli

from test_sparsity import generic_tree

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")


def orthogonal_pair():
    """Joint 1 about z, joint 2 about x on the z axis, body 2's centre of mass on its x axis
    and its inertia diagonal: the angular momentum q̇2 gives body 2 is I_xx x̂ q̇2 about a
    horizontal axis (its centre of mass does not move), so M_12 = ẑ · I_xx x̂ = 0 at every q,
    though body 2 lies outboard of joint 1."""
    m = sd.Model("orthogonal_pair")
    m.add_body("a", sd.joints.Revolute([0.0, 0.0, 1.0]), None, mass=1.0, com=(0.3, 0.1, 0.0),
               inertia=np.diag([0.1, 0.2, 0.3]))
    m.add_body("b", sd.joints.Revolute([1.0, 0.0, 0.0]), "a", (np.eye(3), [0.0, 0.0, 0.5]), mass=2.0,
               com=(0.4, 0.0, 0.0), inertia=np.diag([0.05, 0.07, 0.09]))
    return m


def test_geometric_zeros_of_orthogonal_axes():
    d = sd.plot.sparsity_data(orthogonal_pair(), samples=6)
    assert d.predicted.all()  # the topology cannot see it
    assert d.geometric_zeros.tolist() == [[False, True], [True, False]]
    assert d.observed.tolist() == [[True, False], [False, True]]


@pytest.mark.parametrize("seed", range(2))
def test_a_generic_tree_has_no_geometric_zeros(seed):
    m = generic_tree(8, seed)
    d = sd.plot.sparsity_data(m, samples=3, rng=seed)
    assert not d.geometric_zeros.any()
    assert np.array_equal(d.observed, d.predicted)


def test_the_picture_shows_the_magnitudes_the_topology_allows():
    m = generic_tree(9, 3)
    q = sd.random_configuration(m, np.random.default_rng(5))
    fig = sd.plot.sparsity(m, q)
    image = fig.axes[0].images[0].get_array()
    M = np.abs(sd.mass_matrix(m, q))
    predicted = sd.mass_matrix_sparsity(m)
    assert np.array_equal(np.ma.getmaskarray(image), ~predicted)
    assert np.array_equal(image.data[predicted], M[predicted])
    matplotlib.pyplot.close(fig)


def test_bad_arguments_are_named():
    m = orthogonal_pair()
    with pytest.raises(ValueError, match="samples: expected a positive number"):
        sd.plot.sparsity_data(m, samples=0)
    with pytest.raises(ValueError, match=r"q: expected shape \(2,\)"):
        sd.plot.sparsity_data(m, q=np.zeros(3))


def test_cli_info_writes_the_sparsity_picture(tmp_path, capsys):
    path = tmp_path / "pair.urdf"
    path.write_text("""<robot name="pair">
  <link name="base"/>
  <link name="a"><inertial><mass value="1"/><origin xyz="0.3 0.1 0"/>
    <inertia ixx="0.1" iyy="0.2" izz="0.3" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="b"><inertial><mass value="2"/><origin xyz="0.4 0 0"/>
    <inertia ixx="0.05" iyy="0.07" izz="0.09" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j1" type="continuous"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/></joint>
  <joint name="j2" type="revolute"><parent link="a"/><child link="b"/><origin xyz="0 0 0.5"/><axis xyz="1 0 0"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
</robot>""")
    png = tmp_path / "pair.png"
    assert cli.main(["info", str(path), "--sparsity", str(png)]) == 0
    out = capsys.readouterr().out
    assert "4 entries may be nonzero by the topology" in out and "2 are zero by geometry" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
