package client
