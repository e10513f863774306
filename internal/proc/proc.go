// Package proc holds what the framework needs around the processes it
// starts (the cluster components and the operator): starting them with a
// log file and stopping them, free loopback ports for them to listen on,
// and the ends of their logs for error messages.
package proc

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// FreePort returns a TCP port on 127.0.0.1 that nothing listens on now,
// below the kernel's range of ephemeral ports. A port of that range (which
// a listener on port 0 gets) may, once free, be taken by any outgoing
// connection (kubectl's, a client's, another suite's) before the process
// meant to listen on it binds it: "bind: address already in use". Below
// the range, only another caller of FreePort can take it first.
func FreePort() (int, error) {
	low := ephemeralLow()
	for range 100 {
		port := lowestPort + rand.IntN(low-lowestPort)
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			continue // in use
		}
		if err := l.Close(); err != nil {
			return 0, err
		}
		return port, nil
	}
	return 0, fmt.Errorf("no free port from %d to %d on 127.0.0.1 in 100 tries", lowestPort, low-1)
}

// lowestPort is the lowest port FreePort returns: above the ports that
// services are known by.
const lowestPort = 10000

// ephemeralLow is where the kernel's ephemeral ports begin (Linux's
// ip_local_port_range; 32768 when it cannot be read).
func ephemeralLow() int {
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	fields := strings.Fields(string(data))
	if len(fields) == 0 {
		return 32768
	}
	low, err := strconv.Atoi(fields[0])
	if err != nil || low <= lowestPort+1000 {
		return 32768
	}
	return low
}

// Tail returns the last n lines of a file, or why it could not be read.
func Tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
