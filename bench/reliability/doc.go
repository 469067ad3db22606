// Package reliability holds the reliability tests of runsdesk (issue 6): concurrent
// submissions over several serve processes, kills at the fault points of the resume path,
// a database that stops under load, and the fuzzing script. The tests build the runsdesk
// binary themselves and start their own private MariaDB; the long ones run only with
// RUNSDESK_LONG=1. Results are in bench/README.md, section "Reliability".
package reliability
