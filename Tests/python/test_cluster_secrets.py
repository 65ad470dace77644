"""Issue 42, item 13: `scripts/cluster.sh up` writes the cluster's passwords (CLUSTER_DIR/ports,
each member's patroni.yml) into files that are private before the first byte is written, not
made 0600 after. Run without etcd, Patroni or PostgreSQL: stubs stand in for them, and wrappers
around the programs that write those files (python3 for the ports, sed for patroni.yml) record
the mode of the file their output goes to, at the moment they write it. `up` then fails at the
first member (the stub Patroni exits), which is expected."""
import os
import shutil
import stat
import subprocess

# Not conftest's ROOT: this test needs none of its packages (aiosmtpd…), only bash and stat.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLUSTER_SH = os.path.join(ROOT, "scripts", "cluster.sh")


def executable(path, text):
    with open(path, "w") as file:
        file.write(text)
    os.chmod(path, 0o755)


def test_the_clusters_passwords_are_never_in_a_file_others_can_read(tmp_path):
    bin_dir, pg_bin, cluster = tmp_path / "bin", tmp_path / "pg", tmp_path / "c"
    bin_dir.mkdir()
    pg_bin.mkdir()
    record = tmp_path / "modes"
    real_python, real_sed = shutil.which("python3"), shutil.which("sed")
    recorder = f"""#!/bin/bash
target=$(readlink /proc/$$/fd/1)
if [ -f "$target" ]; then echo "$(stat -L -c '%a' /proc/$$/fd/1) $target" >> {record}; fi
exec {{real}} "$@"
"""
    executable(bin_dir / "python3", recorder.replace("{real}", real_python))
    executable(bin_dir / "sed", recorder.replace("{real}", real_sed))
    executable(bin_dir / "etcd", "#!/bin/sh\nexit 0\n")
    executable(bin_dir / "patroni", "#!/bin/sh\nexit 1\n")
    executable(bin_dir / "haproxy", "#!/bin/sh\nexit 0\n")
    # etcd is "healthy"; no member ever leads.
    executable(bin_dir / "curl", '#!/bin/sh\ncase "$*" in *"/health"*) exit 0 ;; *) exit 1 ;; esac\n')
    executable(pg_bin / "initdb", "#!/bin/sh\nexit 1\n")
    executable(tmp_path / "clinic", "#!/bin/sh\nexit 1\n")
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", PG_BIN=str(pg_bin), CLINIC_BIN=str(tmp_path / "clinic"),
               CLUSTER_DIR=str(cluster))
    result = subprocess.run([CLUSTER_SH, "up"], capture_output=True, text=True, timeout=120, env=env,
                            preexec_fn=lambda: os.umask(0o022))
    assert result.returncode != 0, result.stdout
    assert "n1's Patroni stopped" in result.stderr, result.stderr[-2000:]

    lines = [line.split(" ", 1) for line in record.read_text().splitlines()]
    written = {os.path.relpath(target, cluster): mode for mode, target in lines if target.startswith(str(cluster))}
    for name in ["ports", "n1/patroni.yml", "n2/patroni.yml"]:
        assert name in written, f"{name} was not written: {written}"
        assert written[name] == "600", f"{name} was {written[name]} while its secrets were written"
    assert "superuser_password=" in (cluster / "ports").read_text()
    assert stat.S_IMODE(os.stat(cluster / "ports").st_mode) == 0o600
